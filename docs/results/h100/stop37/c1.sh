#!/usr/bin/env bash
# Stop 37 call 1: A = baf8055 (stop 36's landing), C = working tree (ad1692f: the own-CQ wait, the
# DC lone window inlined). Builds both at once, the GPU tier on C, then A and C interleaved:
# gpu-latency fast / cx7-ib (RC), DC under cx7-ib, nic-ceiling 64 QPs and the 1-QP latency hops;
# then compute-sanitizer on C.
set -u
START=$(date +%s); LIMIT=${LIMIT:-565}
left() { echo $((LIMIT - ($(date +%s) - START))); }
room() { (( $(left) >= $1 )) || { echo "=== skipped $2: $(left) s left"; return 1; }; }
el() { echo "[$(( $(date +%s) - START )) s]"; }
R=$OUT/c1; mkdir -p $R
ROOT=$(pwd)
cp -r .deps/usr/. /usr/ 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
mkdir -p /tmp/a && tar -xzf .ab/a.tgz -C /tmp/a && cp -r .deps /tmp/a/
( cmake -S /tmp/a -B /tmp/a-build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDISSECT_WITH_CUDA=ON -DDISSECT_CUDA_ARCHS=90 \
    -DDISSECT_WITH_MLX5=OFF -DDISSECT_WITH_MPI=OFF -DDISSECT_BUILD_TESTS=OFF > $R/a_build.log 2>&1 &&
  cmake --build /tmp/a-build -j 6 --target dissect >> $R/a_build.log 2>&1; echo "a build rc=$?" >> $R/a_build.log ) &
APID=$!
JOBS=10 QUICK=1 STAGES="tests" OUT=$R timeout 330 scripts/device_run.sh > /dev/null 2>&1
wait $APID
echo "=== after builds + C's GPU tier $(el)"; tail -1 $R/a_build.log
grep -E "tests passed|tests failed|Failed|\*\*\*|Not Run|Timeout" $R/ctest_gpu.log | head -20
C=/tmp/dissect-build-gpu/dissect; A=/tmp/a-build/dissect
[[ -x $C ]] || { echo "no C built"; tail -30 $R/device_run.log; }
[[ -x $A ]] || { echo "no A built"; tail -30 $R/a_build.log; }
m() {  # tree name args...
  local t=$1 n=$2; shift 2; local D; [[ $t == a ]] && D=$A || D=$C
  timeout 20 $D "$@" --output $R/${t}_$n.json > $R/${t}_$n.txt 2>&1; echo "--- $t $n rc=$? $(el)"
}
for round in 1 2; do
  for t in a c; do
    room 60 "round $round $t" || continue
    m $t gl_fast_$round gpu-latency --quick --runs 3 --nic-profile fast
    grep -E "put\+completion us|issue us" $R/${t}_gl_fast_$round.txt | awk '{print "   ", $1,$2,$3,$4,$5}' | head -4
    m $t gl_cx7_$round gpu-latency --quick --runs 3 --nic-profile cx7-ib
    grep -E "put\+completion us" $R/${t}_gl_cx7_$round.txt | awk '{print "   ", $1,$2,$3,$4,$5}' | head -4
  done
done
for t in a c; do for av in compact full; do
  room 15 "dc $t $av" || continue
  m $t dc_$av gpu-latency --quick --runs 3 --transport dc --av $av --nic-profile cx7-ib
  grep -E "put\+completion us|minus" $R/${t}_dc_$av.txt | awk '{$NF=""; print "   ", $0}' | head -6
done; done
for t in a c a c; do
  room 15 "c64 $t" || continue
  m $t c64_$RANDOM nic-ceiling --qps 64 --sizes 8 --runs 1 --rounds 4
  grep -hE "message rate" $(ls -t $R/${t}_c64_*.txt | head -1) | awk '{print "   ", $0}' | head -2
done
for t in a c; do for p in fast cx7-ib; do
  room 15 "nc $t $p" || continue
  m $t nc_$p nic-ceiling --qps 1 --sizes 8 --rounds 1 --runs 1 --nic-profile $p
  grep -E "doorbell to CQE us|seen to stamp|doorbell to seen|stamp to CQE" $R/${t}_nc_$p.txt | head -4 | awk '{print "   ", $(NF-4), $(NF-3)}'
done; done
B=/tmp/dissect-build-gpu; TEST=$(find $B -name gda_gpu_test -type f | head -1); DCT=$(find $B -name dc_gpu_test -type f | head -1)
for tool in memcheck racecheck; do for c in stepped_engine window_order shared_cq_stepped stepped_pool; do
  room 25 "$tool $c" || continue
  T=$TEST; [[ $c == stepped_pool ]] && T=$DCT
  timeout 25 compute-sanitizer --tool $tool --error-exitcode 9 "$T" "$c" > $R/san_${tool}_$c.log 2>&1
  echo "--- $tool $c rc=$? $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san_${tool}_$c.log | head -1) $(el)"
done; done
echo "=== done $(el)"
cd $OUT && tar czf c1.tgz c1 && rm -rf c1
