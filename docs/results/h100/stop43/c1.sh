#!/usr/bin/env bash
# Stop 43 call 1: H = 5cf156d (stop 42's last), N = 3894fb9 (two express windows in one pass where
# 64 WQEBBs are announced). N's GPU tier (the new window_pairs and warp_lanes_gpu.span included);
# one QP's ceiling and 64 QPs' on H and N; gpu-rate's one-thread and one-warp rows (Table 5) on H
# and N; the fast latency path beside H; window_pairs under compute-sanitizer.
set -u
source scripts/device_ab.sh
ab_start 570 c1
ab_tree h .ab/h.tgz 5 > /dev/null &
ab_tier n .ab/n.tgz 11 330
wait
tail -qn1 $R/h_build.log
grep -E "tests passed|tests failed|Failed|\*\*\*Failed|Not Run|Timeout" $R/ctest_gpu.log | head -20
grep -E "window_pairs|warp_lanes" $R/ctest_gpu.log | head -4
for t in h n; do
  ab_run $t c1 nic-ceiling --qps 1 --sizes 8 --runs 3 --rounds 4
  grep -hE "message rate" $R/${t}_c1.txt | head -1 | cut -c1-120
done
for t in h n; do
  ab_run $t c64 nic-ceiling --qps 64 --sizes 8 --runs 1 --rounds 4
  grep -hE "message rate" $R/${t}_c64.txt | head -1 | cut -c1-120
done
for row in "1 1 1 1 exclusive" "32 1 1 32 cooperative" "256 1 1 32 cooperative"; do
  set -- $row
  for t in h n; do
    AB_TIMEOUT=25 ab_run $t r_$1_$5 gpu-rate --threads $1 --qps $2 --ctas $3 --batch $4 --sharing $5 --runs 3
    grep -hE "message rate|model ceiling|bottleneck" $R/${t}_r_$1_$5.txt | cut -c1-140
  done
done
for t in h n; do
  AB_TIMEOUT=30 ab_run $t glf gpu-latency --quick --runs 3 --nic-profile fast
  grep -hE "^gpu-latency +(inline|pointer) +put\+completion us" $R/${t}_glf.txt | cut -c1-110
done
ab_sanitize window_pairs
echo "=== done $(ab_el)"
ab_pack
