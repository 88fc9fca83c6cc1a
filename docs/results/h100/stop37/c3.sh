#!/usr/bin/env bash
# Stop 37 call 3: does gpu-rate --sweep fail at A (baf8055, stop 36's landing) as at D (5d79e65)?
set -u
START=$(date +%s); LIMIT=${LIMIT:-500}
left() { echo $((LIMIT - ($(date +%s) - START))); }
room() { (( $(left) >= $1 )) || { echo "=== skipped $2: $(left) s left"; return 1; }; }
el() { echo "[$(( $(date +%s) - START )) s]"; }
R=$OUT/c3; mkdir -p $R
cp -r .deps/usr/. /usr/ 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
mkdir -p /tmp/a && tar -xzf .ab/a.tgz -C /tmp/a && cp -r .deps /tmp/a/
mkdir -p /tmp/d && git archive HEAD | tar -x -C /tmp/d && cp -r .deps /tmp/d/
for t in a d; do
  ( cmake -S /tmp/$t -B /tmp/$t-build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDISSECT_WITH_CUDA=ON -DDISSECT_CUDA_ARCHS=90 \
      -DDISSECT_WITH_MLX5=OFF -DDISSECT_WITH_MPI=OFF -DDISSECT_BUILD_TESTS=OFF > $R/${t}_build.log 2>&1 &&
    cmake --build /tmp/$t-build -j 8 --target dissect >> $R/${t}_build.log 2>&1; echo "$t build rc=$?" >> $R/${t}_build.log ) &
done
wait
echo "=== built $(el)"; tail -qn1 $R/a_build.log $R/d_build.log
for round in 1 2; do for t in a d; do
  room 40 "sweep $t $round" || continue
  timeout 35 /tmp/$t-build/dissect gpu-rate --sweep --quick --output $R/${t}_sweep_$round.json > $R/${t}_sweep_$round.txt 2>&1
  echo "--- $t sweep $round rc=$? $(el) $(grep -c 'timed out' $R/${t}_sweep_$round.txt) timeouts"
  grep -vE "timed out" $R/${t}_sweep_$round.txt | grep -E "Mmsg/s|error|failed|watchdog" | head -24 | cut -c1-150
done; done
for t in a d; do for k in "32 1 1 1 handoff" "256 1 1 32 handoff"; do
  set -- $k; room 20 "row $t $k" || continue
  timeout 15 /tmp/$t-build/dissect gpu-rate --threads $1 --qps $2 --ctas $3 --batch $4 --sharing $5 --runs 3 --output $R/${t}_row_$1_$4.json > $R/${t}_row_$1_$4.txt 2>&1
  echo "--- $t row $k rc=$? $(el) $(grep -c 'timed out' $R/${t}_row_$1_$4.txt) timeouts"
done; done
echo "=== done $(el)"
cd $OUT && tar czf c3.tgz c3 && rm -rf c3
