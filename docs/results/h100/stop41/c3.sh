#!/usr/bin/env bash
# Stop 41 call 3: M = N + the connection-state cache's mixing hash and both rows' mean (7713267). Figure 10a both at 1,024 and
# 4,096 (where N ran above its ceiling: consecutive QPNs never shared a slot), long reuse both at
# 32,768, then both and send at 16,384.
set -u
source scripts/device_ab.sh
ab_start 200 c3
ab_tree m .ab/m.tgz 16 > /dev/null
tail -qn1 $R/m_build.log
AB_TIMEOUT=50 ab_run m s_both gpu-connection-scaling --direction both --qps 1024,4096 --visit 32 --runs 1 --nic-profile cx7-ib
grep -E "message rate|received|misses per|model ceiling|waiting" $R/m_s_both.txt | cut -c24-150
AB_TIMEOUT=130 ab_run m l_both gpu-connection-scaling --direction both --qps 32768 --visit 8192 --runs 1 --nic-profile cx7-ib
grep -E "message rate|received|misses per|model ceiling|waiting" $R/m_l_both.txt | cut -c24-150
AB_TIMEOUT=50 ab_run m s16 gpu-connection-scaling --direction both,send --qps 16384 --visit 32 --runs 1 --nic-profile cx7-ib
grep -E "message rate|received|misses per|model ceiling|waiting" $R/m_s16.txt | cut -c24-150
echo "=== done $(ab_el)"
ab_pack
