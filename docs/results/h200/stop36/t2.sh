#!/usr/bin/env bash
# Session 36 call 2 (t2): where a held lone WQE's visit and pass go (phases build with marks 26-31)
# beside the normal build's latencies (fast, cx7-ib, cx7-ib-transit; RC and DC).
set -u
START=$(date +%s); el() { echo "[$(( $(date +%s) - START )) s]"; }
R=$OUT/t2; mkdir -p $R
mkdir -p /tmp/head && tar -xf .ab/head.tar -C /tmp/head && cp -r .deps build-deps /tmp/head/
mkdir -p /tmp/head/.ab && cp .ab/*.profile /tmp/head/.ab/
cd /tmp/head && cp -r .deps/usr/. /usr/ 2>/dev/null
CM="-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDISSECT_WITH_CUDA=ON -DDISSECT_CUDA_ARCHS=90 -DDISSECT_WITH_MLX5=OFF -DDISSECT_WITH_MPI=OFF -DDISSECT_BUILD_TESTS=OFF"
( cmake -S . -B /tmp/ph $CM -DCMAKE_CUDA_FLAGS=-DDISSECT_ENGINE_PHASES > $R/ph_build.log 2>&1 && ninja -C /tmp/ph -j 8 dissect >> $R/ph_build.log 2>&1; echo "rc=$?" >> $R/ph_build.log ) &
( cmake -S . -B /tmp/nb $CM > $R/nb_build.log 2>&1 && ninja -C /tmp/nb -j 8 dissect >> $R/nb_build.log 2>&1; echo "rc=$?" >> $R/nb_build.log ) &
wait; echo "builds: ph $(tail -1 $R/ph_build.log) nb $(tail -1 $R/nb_build.log) $(el)"
for b in nb ph; do D=/tmp/$b/dissect; [[ -x $D ]] || continue
for p in fast cx7-ib .ab/cx7-ib-transit.profile; do
  n=$(basename $p .profile)
  timeout 12 $D nic-ceiling --qps 1 --sizes 8 --rounds 1 --runs 1 --nic-profile $p --output $R/${b}_nc_$n.json > $R/${b}_nc_$n.txt 2>&1
  echo "--- $b nc $n $(el)"; grep -E "doorbell to CQE us|stamped|doorbell to seen|seen to stamp|stamp to CQE|ring date" $R/${b}_nc_$n.txt | sed 's/nic-ceiling *doorbell to CQE, 1 QP, 8 B inline//' | awk '{print $1,$2,$3,$4,$5,$6}' | head -6; grep -E "phase cycles" $R/${b}_nc_$n.txt | tail -1
  [[ $n == fast ]] && continue
  timeout 14 $D gpu-latency --quick --runs 2 --transport dc --av compact --nic-profile $p --output $R/${b}_dc_$n.json > $R/${b}_dc_$n.txt 2>&1
  echo "--- $b gl+dc $n $(el)"; grep -E "put\+completion us|issue us" $R/${b}_dc_$n.txt | awk '{$NF="";print}' | head -8; grep -E "phase cycles" $R/${b}_dc_$n.txt | tail -1
done; done
timeout 12 /tmp/nb/dissect gpu-latency --quick --runs 2 --output $R/nb_gl_fast.json > $R/nb_gl_fast.txt 2>&1; grep -E "put\+completion us" $R/nb_gl_fast.txt | head -2
echo "=== done $(el)"
cd $OUT && tar czf t2.tgz t2 && rm -rf t2
