#!/usr/bin/env bash
# Stop 39 call 2: H = e1b3f78 (stop 38's code) and N = 6925ee5 (paced express windows held in a
# per-warp ring, held_windows.h). N's GPU tier and sanitizers, then H and N interleaved.
set -u
source scripts/device_ab.sh
ab_start 580 c2
ab_tree h .ab/h.tgz 5 > /dev/null &
ab_tier n .ab/n.tgz 11 330
wait
tail -qn1 $R/h_build.log
grep -E "tests passed|tests failed|Failed|\*\*\*Failed|Not Run|Timeout" $R/ctest_gpu.log | head -20
grep -E "window_order" $R/ctest_gpu.log | head -4
ab_sanitize window_order_cx7 window_order stepped_engine
for t in h n; do
  ab_run $t nc_cx7 nic-ceiling --qps 1,8,64 --sizes 8 --runs 1 --rounds 3 --nic-profile cx7-ib
  grep -E "message rate" $R/${t}_nc_cx7.txt | cut -c1-120
done
for t in h n h n; do
  ab_run $t c64_$RANDOM nic-ceiling --qps 64 --sizes 8 --runs 1 --rounds 4
  grep -hE "message rate" $(ls -t $R/${t}_c64_*.txt | head -1) | head -1 | cut -c1-120
done
for round in 1 2; do for t in h n; do
  ab_run $t glc_$round gpu-latency --quick --runs 3 --nic-profile cx7-ib
  ab_grep $t glc_$round "^gpu-latency +(inline|pointer) +put\+completion us"
  ab_run $t glf_$round gpu-latency --quick --runs 3 --nic-profile fast
  ab_grep $t glf_$round "^gpu-latency +(inline|pointer) +put\+completion us"
done; done
for t in h n; do
  AB_TIMEOUT=100 ab_run $t cs gpu-connection-scaling --direction send,both --qps 64,1024,8192 --visit 32 --runs 1 --nic-profile cx7-ib
  grep -E "message rate|ceiling" $R/${t}_cs.txt | cut -c1-140
done
for t in h n; do
  AB_TIMEOUT=60 ab_run $t pr gpu-proxy-rate --quick --nic-profile cx7-ib
  grep -E "Mmsg/s" $R/${t}_pr.txt | grep -v "busy\|full" | head -12 | cut -c1-140
done
for t in h n; do
  AB_TIMEOUT=60 ab_run $t gp gpu-goodput --quick --nic-profile cx7-ib
  grep -E "GB/s" $R/${t}_gp.txt | head -12 | cut -c1-140
done
echo "=== done $(ab_el)"
ab_pack
