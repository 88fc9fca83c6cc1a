#!/usr/bin/env bash
# Stop 43 call 2: H = 5cf156d (stop 42's last), L = cd8354c (an express pass runs up to four
# windows of a backlog under one head and one retirement; no two-window pass, whose inlined code
# cost call 1's fast latency 0.28 us). L's GPU tier; one QP's ceiling, 64 QPs', gpu-rate's one-warp
# rows and the fast and cx7-ib latency on H and L interleaved; a phases build of L at one QP.
set -u
source scripts/device_ab.sh
ab_start 560 c2
ab_tree h .ab/h.tgz 4 > /dev/null &
AB_CMAKE_FLAGS=-DCMAKE_CUDA_FLAGS=-DDISSECT_ENGINE_PHASES ab_tree p .ab/l.tgz 4 > /dev/null &
ab_tier l .ab/l.tgz 8 330
wait
tail -qn1 $R/h_build.log $R/p_build.log
grep -E "tests passed|tests failed|Failed|\*\*\*Failed|Not Run|Timeout" $R/ctest_gpu.log | head -20
for round in 1 2; do
  for t in h l; do
    ab_run $t c1_$round nic-ceiling --qps 1 --sizes 8 --runs 3 --rounds 4
    grep -hE "message rate" $R/${t}_c1_$round.txt | head -1 | cut -c1-120
    ab_run $t c64_$round nic-ceiling --qps 64 --sizes 8 --runs 1 --rounds 4
    grep -hE "message rate" $R/${t}_c64_$round.txt | head -1 | cut -c1-120
    AB_TIMEOUT=30 ab_run $t glf_$round gpu-latency --quick --runs 3 --nic-profile fast
    grep -hE "^gpu-latency +(inline|pointer) +put\+completion us" $R/${t}_glf_$round.txt | cut -c1-110
  done
done
for row in "32 1 1 32 cooperative" "256 1 1 32 cooperative"; do
  set -- $row
  for t in h l; do
    AB_TIMEOUT=25 ab_run $t r_$1_$5 gpu-rate --threads $1 --qps $2 --ctas $3 --batch $4 --sharing $5 --runs 3
    grep -hE "message rate|model ceiling" $R/${t}_r_$1_$5.txt | cut -c1-140
  done
done
for t in h l; do
  AB_TIMEOUT=40 ab_run $t glc gpu-latency --quick --runs 3 --nic-profile cx7-ib
  grep -hE "^gpu-latency +(inline|pointer) +put\+completion us" $R/${t}_glc.txt | cut -c1-110
done
ab_run p c1 nic-ceiling --qps 1 --sizes 8 --runs 1 --rounds 4
grep -h "phase cycles" $R/p_c1.txt | tail -2 | cut -c1-600
ab_sanitize window_pairs window_order
echo "=== done $(ab_el)"
ab_pack
