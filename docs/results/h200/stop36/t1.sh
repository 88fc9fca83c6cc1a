#!/usr/bin/env bash
# Session 36 call 1 (t1): the held lone WQE (b7a5b02). GPU tier; 64-QP ceiling; latency on fast,
# cx7-ib, cx7-ib-transit; DC - RC; Figure 10b; sanitizers; then a phases build (19/20/25: ns late/early).
set -u
START=$(date +%s); LIMIT=${LIMIT:-560}
left() { echo $((LIMIT - ($(date +%s) - START))); }
room() { (( $(left) >= $1 )) || { echo "=== skipped $2: $(left) s left"; return 1; }; }
el() { echo "[$(( $(date +%s) - START )) s]"; }
R=$OUT/t1; mkdir -p $R
mkdir -p /tmp/head && tar -xf .ab/head.tar -C /tmp/head && cp -r .deps build-deps /tmp/head/
mkdir -p /tmp/head/.ab && cp .ab/*.sh .ab/*.profile /tmp/head/.ab/
cp -r .deps/usr/. /usr/ 2>/dev/null
(cd /tmp/head && JOBS=16 QUICK=1 STAGES="tests" OUT=$R timeout 300 scripts/device_run.sh > /dev/null 2>&1)
echo "=== after build+tests $(el)"
grep -E "tests passed|tests failed|Failed|\*\*\*|Not Run|Timeout" $R/ctest_gpu.log | head -20
B=/tmp/dissect-build-gpu; D=$B/dissect; TEST=$(find $B -name gda_gpu_test -type f | head -1)
[[ -x $D ]] || { echo "no dissect built"; tail -40 $R/device_run.log; exit 0; }
cd /tmp/head
# the phases build in the background while the runs go (4 jobs)
( cmake -S . -B /tmp/ph -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDISSECT_WITH_CUDA=ON -DDISSECT_CUDA_ARCHS=90 -DDISSECT_WITH_MLX5=OFF -DDISSECT_WITH_MPI=OFF -DDISSECT_BUILD_TESTS=OFF -DCMAKE_CUDA_FLAGS=-DDISSECT_ENGINE_PHASES > $R/ph_build.log 2>&1 && nice -n 10 ninja -C /tmp/ph -j 4 dissect >> $R/ph_build.log 2>&1; echo "phases build rc=$?" >> $R/ph_build.log ) &
for round in 1 2; do
  room 12 "ceiling" || continue
  timeout 12 $D nic-ceiling --qps 64 --sizes 8 --runs 1 --rounds 4 --output $R/c64_$round.json > $R/c64_$round.txt 2>&1
  echo "--- c64 round $round: $(grep -E 'message rate' $R/c64_$round.txt | awk '{print $(NF-3)}') $(el)"
done
for p in fast cx7-ib .ab/cx7-ib-transit.profile; do
  n=$(basename $p .profile); room 30 "lat $n" || continue
  timeout 12 $D nic-ceiling --qps 1 --sizes 8 --rounds 1 --runs 1 --nic-profile $p --output $R/nc_$n.json > $R/nc_$n.txt 2>&1
  grep -E "doorbell to CQE us|stamped|doorbell to seen|seen to stamp|stamp to CQE|ring date|lone window" $R/nc_$n.txt | sed 's/nic-ceiling *doorbell to CQE, 1 QP, 8 B inline//' | awk '{$NF=""; print}' | head -8
  timeout 17 $D gpu-latency --quick --runs 3 --nic-profile $p --output $R/gl_$n.json > $R/gl_$n.txt 2>&1
  echo "--- lat $n rc=$? $(el)"; grep -E "put\+completion us|issue us" $R/gl_$n.txt | head -4
done
for p in cx7-ib .ab/cx7-ib-transit.profile; do for av in compact full; do
  n=$(basename $p .profile); room 10 "dc $n $av" || continue
  timeout 9 $D gpu-latency --quick --runs 2 --transport dc --av $av --nic-profile $p --output $R/dc_${n}_$av.json > $R/dc_${n}_$av.txt 2>&1
  echo "--- dc $n $av rc=$? $(el)"; grep -E "put\+completion us|DC - RC|dc minus" $R/dc_${n}_$av.txt | head -6
done; done
if room 30 f10b; then timeout 25 $D gpu-connection-scaling --transport rc,dc --nic-profile cx7-ib --qps 64,1984 --dcis 64 --direction send --runs 1 --messages 1048576 --output $R/f10b.json > $R/f10b.txt 2>&1; echo "--- f10b rc=$? $(el)"; grep -E "Mmsg/s|rate" $R/f10b.txt | head -8; fi
for tool in memcheck racecheck; do for c in stepped_engine window_order shared_cq_stepped stepped_pool; do
  room 20 "$tool $c" || continue
  T=$TEST; [[ $c == stepped_pool ]] && T=$(find $B -name dc_gpu_test -type f | head -1)
  timeout 20 compute-sanitizer --tool $tool --error-exitcode 9 "$T" "$c" > $R/san_${tool}_$c.log 2>&1
  echo "--- $tool $c rc=$? $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san_${tool}_$c.log | head -1) $(el)"
done; done
wait
echo "=== phases $(tail -1 $R/ph_build.log) $(el)"
P=/tmp/ph/dissect
if [[ -x $P ]]; then for p in cx7-ib .ab/cx7-ib-transit.profile; do
  n=$(basename $p .profile); room 25 "ph $n" || continue
  timeout 12 $P nic-ceiling --qps 1 --sizes 8 --rounds 1 --runs 1 --nic-profile $p --output $R/ph_rc_$n.json > $R/ph_rc_$n.txt 2>&1
  echo "--- ph rc $n $(el)"; grep -E "phase cycles" $R/ph_rc_$n.txt | head -1
  timeout 12 $P gpu-latency --quick --runs 1 --transport dc --av compact --nic-profile $p --output $R/ph_dc_$n.json > $R/ph_dc_$n.txt 2>&1
  echo "--- ph dc $n $(el)"; grep -E "phase cycles" $R/ph_dc_$n.txt | tail -1
done; fi
echo "=== done $(el)"
