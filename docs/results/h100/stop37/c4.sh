#!/usr/bin/env bash
# Stop 37 call 4: D = 5d79e65 (call 2's D), E = working tree (17ff6ad: the in-place release
# inlined). Builds both, the GPU tier on E, D and E interleaved (RC fast / cx7-ib, DC cx7-ib,
# 64-QP ceiling, 1-QP hops), sanitizers on E, then E alone: Table 5's sweep, Figure 10b.
set -u
START=$(date +%s); LIMIT=${LIMIT:-520}
left() { echo $((LIMIT - ($(date +%s) - START))); }
room() { (( $(left) >= $1 )) || { echo "=== skipped $2: $(left) s left"; return 1; }; }
el() { echo "[$(( $(date +%s) - START )) s]"; }
R=$OUT/c4; mkdir -p $R
cp -r .deps/usr/. /usr/ 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
mkdir -p /tmp/d && tar -xzf .ab/d.tgz -C /tmp/d && cp -r .deps /tmp/d/
( cmake -S /tmp/d -B /tmp/d-build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDISSECT_WITH_CUDA=ON -DDISSECT_CUDA_ARCHS=90 \
    -DDISSECT_WITH_MLX5=OFF -DDISSECT_WITH_MPI=OFF -DDISSECT_BUILD_TESTS=OFF > $R/d_build.log 2>&1 &&
  cmake --build /tmp/d-build -j 6 --target dissect >> $R/d_build.log 2>&1; echo "d build rc=$?" >> $R/d_build.log ) &
DPID=$!
JOBS=10 QUICK=1 STAGES="tests" OUT=$R timeout 330 scripts/device_run.sh > /dev/null 2>&1
wait $DPID
echo "=== after builds + E's GPU tier $(el)"; tail -1 $R/d_build.log
grep -E "tests passed|tests failed|Failed|\*\*\*|Not Run|Timeout" $R/ctest_gpu.log | head -20
E=/tmp/dissect-build-gpu/dissect; D=/tmp/d-build/dissect
m() {  # tree name args...
  local t=$1 n=$2; shift 2; local X; [[ $t == d ]] && X=$D || X=$E
  timeout ${T:-20} $X "$@" --output $R/${t}_$n.json > $R/${t}_$n.txt 2>&1; echo "--- $t $n rc=$? $(el)"
}
for round in 1 2; do for t in d e; do
  room 60 "round $round $t" || continue
  m $t gl_fast_$round gpu-latency --quick --runs 3 --nic-profile fast
  grep -E "^gpu-latency +(inline|pointer) +(put\+completion|issue) us" $R/${t}_gl_fast_$round.txt | awk '{print "   ", $2,$3,$4,$5}'
  m $t gl_cx7_$round gpu-latency --quick --runs 3 --nic-profile cx7-ib
  grep -E "^gpu-latency +(inline|pointer) +(put\+completion|issue) us" $R/${t}_gl_cx7_$round.txt | awk '{print "   ", $2,$3,$4,$5}'
done; done
for t in d e; do for av in compact full; do
  room 15 "dc $t $av" || continue
  m $t dc_$av gpu-latency --quick --runs 5 --transport dc --av $av --nic-profile cx7-ib
  grep -E "put\+completion us" $R/${t}_dc_$av.txt | grep -v counters | awk '{$NF=""; print "   ", $0}' | head -6
done; done
for t in d e d e; do
  room 15 "c64 $t" || continue
  m $t c64_$RANDOM nic-ceiling --qps 64 --sizes 8 --runs 1 --rounds 4
  grep -hE "message rate" $(ls -t $R/${t}_c64_*.txt | head -1) | awk '{print "   ", $0}' | head -2
done
for t in d e; do for p in fast cx7-ib; do
  room 15 "nc $t $p" || continue
  m $t nc_$p nic-ceiling --qps 1 --sizes 8 --rounds 1 --runs 1 --nic-profile $p
  grep -E "doorbell to CQE us|stamped|seen to stamp|doorbell to seen|stamp to CQE|ring date" $R/${t}_nc_$p.txt | head -6 | awk '{print "   ", $(NF-6), $(NF-5), $(NF-4), $(NF-3)}'
done; done
B=/tmp/dissect-build-gpu; TEST=$(find $B -name gda_gpu_test -type f | head -1); DCT=$(find $B -name dc_gpu_test -type f | head -1)
for tool in memcheck racecheck; do for c in stepped_engine window_order shared_cq_stepped stepped_pool; do
  room 25 "$tool $c" || continue
  T=$TEST; [[ $c == stepped_pool ]] && T=$DCT
  timeout 25 compute-sanitizer --tool $tool --error-exitcode 9 "$T" "$c" > $R/san_${tool}_$c.log 2>&1
  echo "--- $tool $c rc=$? $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san_${tool}_$c.log | head -1) $(el)"
done; done
if room 40 f10b; then T=30 m e f10b gpu-connection-scaling --transport rc,dc --nic-profile cx7-ib --qps 64,1984 --dcis 64 --direction send --runs 1 --messages 1048576; grep -E "Mmsg/s" $R/e_f10b.txt | head -8 | cut -c1-160; fi
if room 40 sweep; then T=35 m e sweep gpu-rate --sweep --quick; echo "   $(grep -c 'timed out' $R/e_sweep.txt) timeouts"; grep -E "cooperative|one thread, 1 QP|64 SMs" $R/e_sweep.txt | grep -E "message rate|ceiling" | head -10 | cut -c1-150; fi
echo "=== done $(el)"
cd $OUT && tar czf c4.tgz c4 && rm -rf c4
