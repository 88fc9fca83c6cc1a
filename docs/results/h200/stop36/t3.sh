#!/usr/bin/env bash
# Session 36 call 3 (t3): 63a8dcc (pipe rates, marks 32-33) normal (A) and with the paced lone
# window inlined (B, .ab/varb.tar), and A's phases build: latency fast/cx7-ib/transit, RC and DC.
set -u
START=$(date +%s); el() { echo "[$(( $(date +%s) - START )) s]"; }
R=$OUT/t3; mkdir -p $R
for t in a b; do mkdir -p /tmp/$t && tar -xf .ab/head.tar -C /tmp/$t && cp -r .deps build-deps /tmp/$t/ && mkdir -p /tmp/$t/.ab && cp .ab/*.profile /tmp/$t/.ab/; done
tar -xf .ab/varb.tar -C /tmp/b
cp -r .deps/usr/. /usr/ 2>/dev/null
CM="-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDISSECT_WITH_CUDA=ON -DDISSECT_CUDA_ARCHS=90 -DDISSECT_WITH_MLX5=OFF -DDISSECT_WITH_MPI=OFF -DDISSECT_BUILD_TESTS=OFF"
( cd /tmp/a && cmake -S . -B /tmp/ph $CM -DCMAKE_CUDA_FLAGS=-DDISSECT_ENGINE_PHASES > $R/ph_build.log 2>&1 && ninja -C /tmp/ph -j 6 dissect >> $R/ph_build.log 2>&1; echo "rc=$?" >> $R/ph_build.log ) &
( cd /tmp/a && cmake -S . -B /tmp/ba $CM > $R/a_build.log 2>&1 && ninja -C /tmp/ba -j 5 dissect >> $R/a_build.log 2>&1; echo "rc=$?" >> $R/a_build.log ) &
( cd /tmp/b && cmake -S . -B /tmp/bb $CM > $R/b_build.log 2>&1 && ninja -C /tmp/bb -j 5 dissect >> $R/b_build.log 2>&1; echo "rc=$?" >> $R/b_build.log ) &
wait; echo "builds: ph $(tail -1 $R/ph_build.log) a $(tail -1 $R/a_build.log) b $(tail -1 $R/b_build.log) $(el)"
cd /tmp/a
for b in ba bb ph; do D=/tmp/$b/dissect; [[ -x $D ]] || continue
for p in fast cx7-ib .ab/cx7-ib-transit.profile; do
  n=$(basename $p .profile)
  timeout 12 $D nic-ceiling --qps 1 --sizes 8 --rounds 1 --runs 1 --nic-profile $p --output $R/${b}_nc_$n.json > $R/${b}_nc_$n.txt 2>&1
  echo "--- $b nc $n $(el)"; grep -E "doorbell to CQE us|stamped|doorbell to seen|seen to stamp|stamp to CQE|ring date" $R/${b}_nc_$n.txt | sed 's/nic-ceiling *doorbell to CQE, 1 QP, 8 B inline//' | awk '{print $1,$2,$3,$4,$5,$6}' | head -6; grep -E "phase cycles" $R/${b}_nc_$n.txt | head -1
  [[ $n == fast ]] && continue
  timeout 14 $D gpu-latency --quick --runs 2 --transport dc --av compact --nic-profile $p --output $R/${b}_dc_$n.json > $R/${b}_dc_$n.txt 2>&1
  echo "--- $b gl+dc $n $(el)"; grep -E "put\+completion us" $R/${b}_dc_$n.txt | awk '{$NF="";print}' | grep -v counters | head -4; grep -E "phase cycles" $R/${b}_dc_$n.txt | tail -1
done; done
for b in ba bb; do timeout 12 /tmp/$b/dissect gpu-latency --quick --runs 2 --output $R/${b}_gl_fast.json > $R/${b}_gl_fast.txt 2>&1; echo "$b fast: $(grep -E 'put\+completion us' $R/${b}_gl_fast.txt | head -2 | awk '{print $(NF-4)}' | tr '\n' ' ')"; done
for b in ba bb ba bb; do timeout 12 /tmp/$b/dissect nic-ceiling --qps 64 --sizes 8 --runs 1 --rounds 4 --output $R/${b}_c64.json > $R/${b}_c64.txt 2>&1; echo "$b c64: $(grep -E 'message rate' $R/${b}_c64.txt | awk '{print $(NF-3)}')"; done
echo "=== done $(el)"
cd $OUT && tar czf t3.tgz t3 && rm -rf t3
