#!/usr/bin/env bash
# Stop 41 call 1: H = fbb957a (stop 40's last), N = the sweep of the slots past the doorbell watch
# (has_news) and its GPU test. N's GPU tier; long reuse (8,192 writes a visit, both) at 4,096 QPs
# on H and N, the engine's point in stop 40; N at 1,024 and 16,384; the fast path beside H; N's
# new case under compute-sanitizer.
set -u
source scripts/device_ab.sh
ab_start 570 c1
ab_tree h .ab/h.tgz 5 > /dev/null &
ab_tier n .ab/n.tgz 11 330
wait
tail -qn1 $R/h_build.log
grep -E "tests passed|tests failed|Failed|\*\*\*Failed|Not Run|Timeout" $R/ctest_gpu.log | head -20
grep -E "many_qps" $R/ctest_gpu.log | head -4
for t in n h; do
  AB_TIMEOUT=70 ab_run $t reuse4k gpu-connection-scaling --direction both --qps 4096 --visit 8192 --runs 1 --nic-profile cx7-ib
  grep -E "message rate|received|misses per|model ceiling|waiting" $R/${t}_reuse4k.txt | cut -c24-150
done
for t in h n; do
  ab_run $t glf_$RANDOM gpu-latency --quick --runs 3 --nic-profile fast
  grep -hE "^gpu-latency +(inline|pointer) +put\+completion us" $(ls -t $R/${t}_glf_*.txt | head -1) | cut -c1-110
done
for t in h n; do
  ab_run $t c64 nic-ceiling --qps 64 --sizes 8 --runs 1 --rounds 4
  grep -hE "message rate" $R/${t}_c64.txt | head -1 | cut -c1-120
done
ab_sanitize many_qps_one_warp_stepped
AB_TIMEOUT=120 ab_run n reuse gpu-connection-scaling --direction both --qps 1024,16384 --visit 8192 --runs 1 --nic-profile cx7-ib
grep -E "message rate|received|misses per|model ceiling|waiting" $R/n_reuse.txt | cut -c24-150
echo "=== done $(ab_el)"
ab_pack
