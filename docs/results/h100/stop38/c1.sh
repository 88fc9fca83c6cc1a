#!/usr/bin/env bash
# Stop 38 call 1: A = 157255d (stop 37's landing), B = 7ca405d (the held CQE built at the hold,
# released before the retirement), C = working tree 458c0bb (B + the in-place release inline).
# The GPU tier on C, then Table 5's sweep right after it (the (†) row), then A/B/C interleaved.
set -u
source scripts/device_ab.sh
ab_start 570 c1
ab_tree a .ab/a.tgz 3 > /dev/null &
ab_tree b .ab/b.tgz 3 > /dev/null &
JOBS=10 QUICK=1 STAGES="tests" OUT=$R timeout 330 scripts/device_run.sh > /dev/null 2>&1
wait
mkdir -p /tmp/c-build && ln -sf /tmp/dissect-build-gpu/dissect /tmp/c-build/dissect
echo "=== builds + C's GPU tier $(ab_el)"; tail -1 $R/a_build.log; tail -1 $R/b_build.log
grep -E "tests passed|tests failed|Failed|\*\*\*|Not Run|Timeout" $R/ctest_gpu.log | head -20
AB_TIMEOUT=40 ab_run c sweep gpu-rate --sweep --quick
echo "    $(grep -c 'timed out' $R/c_sweep.txt) timeouts"; grep -E "Mmsg/s|lock per WQE" $R/c_sweep.txt | head -12 | cut -c1-150
for round in 1 2; do for t in a b c; do
  ab_run $t glf_$round gpu-latency --quick --runs 3 --nic-profile fast
  ab_grep $t glf_$round "^gpu-latency +(inline|pointer) +(put\+completion|issue) us"
  ab_run $t glc_$round gpu-latency --quick --runs 3 --nic-profile cx7-ib
  ab_grep $t glc_$round "^gpu-latency +(inline|pointer) +(put\+completion|issue) us"
done; done
for t in a b c a b c; do
  ab_run $t c64_$RANDOM nic-ceiling --qps 64 --sizes 8 --runs 1 --rounds 4
  grep -hE "message rate" $(ls -t $R/${t}_c64_*.txt | head -1) | awk '{print "   ", $0}' | head -1
done
for t in a c; do for av in compact; do
  ab_run $t dc_$av gpu-latency --quick --runs 5 --transport dc --av $av --nic-profile cx7-ib
  ab_grep $t dc_$av "put\+completion us" | grep -v counters | head -4
done; done
for t in a c; do
  ab_run $t nc_cx7 nic-ceiling --qps 1 --sizes 8 --rounds 1 --runs 1 --nic-profile cx7-ib
  grep -E "doorbell to CQE us|stamped|seen to stamp|doorbell to seen|stamp to CQE|ring date" $R/${t}_nc_cx7.txt | head -6 | awk '{print "   ", $(NF-6), $(NF-5), $(NF-4), $(NF-3)}'
done
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
