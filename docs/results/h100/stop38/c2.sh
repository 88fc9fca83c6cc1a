#!/usr/bin/env bash
# Stop 38 call 2: C = 458c0bb (the held CQE at the hold, the in-place release inline), D = the
# lookup in two halves (its exchange at the hold, its answer after the CQE). Both from tarballs;
# the GPU tier on D, then C and D interleaved, then D's sweep and sanitizers.
set -u
source scripts/device_ab.sh
ab_start 560 c2
ab_tree c .ab/c.tgz 4 > /dev/null &
mkdir -p /tmp/d && tar -xzf .ab/d.tgz -C /tmp/d && cp -r .deps build-deps /tmp/d/
(cd /tmp/d && JOBS=10 QUICK=1 STAGES="tests" OUT=$R timeout 330 scripts/device_run.sh > /dev/null 2>&1)
wait
mkdir -p /tmp/d-build && ln -sf /tmp/dissect-build-gpu/dissect /tmp/d-build/dissect
echo "=== builds + D's GPU tier $(ab_el)"; tail -1 $R/c_build.log
grep -E "tests passed|tests failed|Failed|\*\*\*|Not Run|Timeout" $R/ctest_gpu.log | head -20
for round in 1 2; do for t in c d; do
  ab_run $t glf_$round gpu-latency --quick --runs 3 --nic-profile fast
  ab_grep $t glf_$round "^gpu-latency +(inline|pointer) +put\+completion us"
  ab_run $t glc_$round gpu-latency --quick --runs 3 --nic-profile cx7-ib
  ab_grep $t glc_$round "^gpu-latency +(inline|pointer) +put\+completion us"
done; done
for t in c d c d; do
  ab_run $t c64_$RANDOM nic-ceiling --qps 64 --sizes 8 --runs 1 --rounds 4
  grep -hE "message rate" $(ls -t $R/${t}_c64_*.txt | head -1) | awk '{print "   ", $0}' | head -1
done
for t in c d; do for av in compact full; do
  ab_run $t dc_$av gpu-latency --quick --runs 5 --transport dc --av $av --nic-profile cx7-ib
  ab_grep $t dc_$av "put\+completion us" | grep -v counters | head -4
done; done
for t in c d; do for p in cx7-ib fast; do
  ab_run $t nc_$p nic-ceiling --qps 1 --sizes 8 --rounds 1 --runs 1 --nic-profile $p
  grep -E "doorbell to CQE us|stamped|seen to stamp|doorbell to seen|stamp to CQE|ring date" $R/${t}_nc_$p.txt | head -6 | awk '{print "   ", $(NF-6), $(NF-5), $(NF-4), $(NF-3)}'
done; done
B=/tmp/dissect-build-gpu; TEST=$(find $B -name gda_gpu_test -type f | head -1); DCT=$(find $B -name dc_gpu_test -type f | head -1)
for tool in memcheck racecheck; do for c in stepped_engine window_order stepped_pool; do
  ab_room 25 "$tool $c" || continue
  T=$TEST; [[ $c == stepped_pool ]] && T=$DCT
  timeout 25 compute-sanitizer --tool $tool --error-exitcode 9 "$T" "$c" > $R/san_${tool}_$c.log 2>&1
  echo "--- $tool $c rc=$? $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san_${tool}_$c.log | head -1) $(ab_el)"
done; done
echo "=== done $(ab_el)"
rm -f $R/device_run.log
ab_pack
