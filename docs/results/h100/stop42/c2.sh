#!/usr/bin/env bash
# Stop 42 call 2 (same machine as call 1): long reuse both ways at 32,768 QPs a direction on N.
set -u
source scripts/device_ab.sh
ab_start 400 c2
[[ -x /tmp/n-build/dissect ]] || ab_tree n .ab/n.tgz 16 > /dev/null
AB_TIMEOUT=300 ab_run n l_both gpu-connection-scaling --direction both --qps 32768 --visit 8192 --runs 1 --nic-profile cx7-ib
grep -E "message rate|received|misses per|model ceiling|waiting|mean" $R/n_l_both.txt | cut -c24-160
echo "=== done $(ab_el)"
ab_pack
