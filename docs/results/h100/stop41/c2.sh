#!/usr/bin/env bash
# Stop 41 call 2: N's Figure 10a under the quantum and the sweep (short and long reuse, send,
# receive, both), Figure 10b quick, compute-sanitizer of the engine's stepped cases.
set -u
source scripts/device_ab.sh
ab_start 580 c2
[[ -x /tmp/n-build/dissect ]] || ab_tree n .ab/n.tgz 16 > /dev/null
for d in both send receive; do
  AB_TIMEOUT=150 ab_run n s_$d gpu-connection-scaling --direction $d --qps 64,1024,4096,16384,32768 --visit 32 --runs 1 --nic-profile cx7-ib
  grep -E "message rate|received|misses per|model ceiling|waiting" $R/n_s_$d.txt | cut -c24-150
done
for d in both send; do
  AB_TIMEOUT=100 ab_run n l_$d gpu-connection-scaling --direction $d --qps 64,4096,32768 --visit 8192 --runs 1 --nic-profile cx7-ib
  grep -E "message rate|received|model ceiling|waiting" $R/n_l_$d.txt | cut -c24-150
done
echo "=== done $(ab_el)"
ab_pack
