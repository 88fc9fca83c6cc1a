#!/usr/bin/env bash
# Stop 37 call 5: the (†) row of Table 5 (32 threads, 1 QP, handoff at batch 1) at A = baf8055
# (stop 36's landing) and H = HEAD (the own-CQ wait), interleaved, five one-run passes each, after
# a warm-up of other experiments as in calls 2 and 4, where the sweep failed at this row.
set -u
START=$(date +%s); LIMIT=${LIMIT:-400}
left() { echo $((LIMIT - ($(date +%s) - START))); }
room() { (( $(left) >= $1 )) || { echo "=== skipped $2: $(left) s left"; return 1; }; }
el() { echo "[$(( $(date +%s) - START )) s]"; }
R=$OUT/c5; mkdir -p $R
cp -r .deps/usr/. /usr/ 2>/dev/null
mkdir -p /tmp/a && tar -xzf .ab/a.tgz -C /tmp/a && cp -r .deps /tmp/a/
mkdir -p /tmp/h && git archive HEAD | tar -x -C /tmp/h && cp -r .deps /tmp/h/
for t in a h; do
  ( cmake -S /tmp/$t -B /tmp/$t-build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDISSECT_WITH_CUDA=ON -DDISSECT_CUDA_ARCHS=90 \
      -DDISSECT_WITH_MLX5=OFF -DDISSECT_WITH_MPI=OFF -DDISSECT_BUILD_TESTS=OFF > $R/${t}_build.log 2>&1 &&
    cmake --build /tmp/$t-build -j 8 --target dissect >> $R/${t}_build.log 2>&1; echo "$t build rc=$?" >> $R/${t}_build.log ) &
done
wait
echo "=== built $(el)"; tail -qn1 $R/a_build.log $R/h_build.log
for t in a h; do timeout 20 /tmp/$t-build/dissect gpu-latency --quick --runs 3 --nic-profile cx7-ib > /dev/null 2>&1; done
for i in 1 2 3 4 5; do for t in a h; do
  room 25 "row $t $i" || continue
  timeout 22 /tmp/$t-build/dissect gpu-rate --threads 32 --qps 1 --ctas 1 --batch 1 --sharing handoff --quick --output $R/${t}_dag_$i.json > $R/${t}_dag_$i.txt 2>&1
  echo "--- $t $i rc=$? $(el) $(grep -c 'timed out' $R/${t}_dag_$i.txt) timeouts $(grep -E 'message rate' $R/${t}_dag_$i.txt | awk '{print $(NF-3)}') $(grep -oE 'engine kernel failed[^:]*' $R/${t}_dag_$i.txt | head -1)"
done; done
echo "=== done $(el)"
cd $OUT && tar czf c5.tgz c5 && rm -rf c5
