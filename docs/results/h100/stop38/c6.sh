#!/usr/bin/env bash
# Stop 38 call 6: C = 458c0bb (the landing engine so far) and G = the engine kernel built once per
# pacing (engine_kernel<Pacing::never|always>). The GPU tier on G, then C and G interleaved.
set -u
source scripts/device_ab.sh
ab_start 285 c6
ab_tree c .ab/c.tgz 4 > /dev/null &
ab_tier g .ab/g.tgz 11 215
wait
tail -qn1 $R/c_build.log
grep -E "tests passed|tests failed|Failed|\*\*\*Failed|Not Run|Timeout" $R/ctest_gpu.log | head -12
for round in 1 2; do for t in c g; do
  ab_run $t glf_$round gpu-latency --quick --runs 3 --nic-profile fast
  ab_grep $t glf_$round "^gpu-latency +(inline|pointer) +put\+completion us"
  ab_run $t glc_$round gpu-latency --quick --runs 3 --nic-profile cx7-ib
  ab_grep $t glc_$round "^gpu-latency +(inline|pointer) +put\+completion us"
done; done
for t in c g c g; do
  ab_run $t c64_$RANDOM nic-ceiling --qps 64 --sizes 8 --runs 1 --rounds 4
  grep -hE "message rate" $(ls -t $R/${t}_c64_*.txt | head -1) | awk '{print "   ", $0}' | head -1
done
for t in c g; do
  ab_run $t dc gpu-latency --quick --runs 5 --transport dc --av compact --nic-profile cx7-ib
  ab_grep $t dc "put\+completion us" | grep -v counters | head -4
  ab_run $t nc nic-ceiling --qps 1 --sizes 8 --rounds 1 --runs 1 --nic-profile fast
  grep -E "doorbell to CQE us|ring date" $R/${t}_nc.txt | head -2 | awk '{print "   ", $(NF-6), $(NF-5), $(NF-4), $(NF-3)}'
done
AB_TIMEOUT=30 ab_run g sweep gpu-rate --sweep --quick
echo "    $(grep -c 'timed out' $R/g_sweep.txt) timeouts"; grep -E "message rate|ceiling" $R/g_sweep.txt | grep -E "1 QP, batch 1 |cooperative \(.\) " | head -6 | cut -c1-150
ab_sanitize stepped_engine window_order stepped_pool
echo "=== done $(ab_el)"
ab_pack
