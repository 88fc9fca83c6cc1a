#!/usr/bin/env bash
# Stop 42 call 4: N = d7c38ed (calls 1-3), W = 1634a78 (the doorbell watch reads a cached slot's
# head checks, acquired, into the Window; the head takes them from shared memory). W's GPU tier;
# latency fast and cx7-ib, RC and DC, N and W interleaved; nic-ceiling 64 QPs and 1 QP's hops;
# compute-sanitizer of the engine's stepped cases; gpu-rate --sweep --quick after the tier.
set -u
source scripts/device_ab.sh
ab_start 580 c4
ab_tree n .ab/n.tgz 5 > /dev/null &
ab_tier w .ab/w.tgz 11 330
wait
tail -qn1 $R/n_build.log
grep -E "tests passed|tests failed|\*\*\*Failed|Not Run|Timeout" $R/ctest_gpu.log | head -20
for i in 1 2; do
  for t in n w; do
    AB_TIMEOUT=30 ab_run $t glf_$i gpu-latency --quick --runs 3 --nic-profile fast
    grep -hE "^gpu-latency +(inline|pointer) +(put\+completion|round trip) us" $R/${t}_glf_$i.txt | cut -c1-100
  done
done
for av in compact full; do
  for t in n w; do
    AB_TIMEOUT=45 ab_run $t dc_$av gpu-latency --quick --runs 5 --transport dc --av $av --nic-profile cx7-ib
    grep -E "put\+completion us" $R/${t}_dc_$av.txt | cut -c1-100
  done
done
for t in n w; do
  ab_run $t c64 nic-ceiling --qps 64 --sizes 8 --runs 1 --rounds 4
  grep -hE "message rate" $R/${t}_c64.txt | head -1 | cut -c1-120
  ab_run $t lat1 nic-ceiling --qps 1 --sizes 8 --runs 1 --rounds 1
  grep -hE "doorbell to CQE|seen to stamp|doorbell to seen|stamp to CQE" $R/${t}_lat1.txt | grep -v " - " | cut -c1-120
done
ab_sanitize stepped_engine window_order_cx7 many_qps_one_warp_stepped
AB_TIMEOUT=120 ab_run w sweep gpu-rate --sweep --quick
tail -n 30 $R/w_sweep.txt | cut -c1-150
echo "=== done $(ab_el)"
ab_pack
