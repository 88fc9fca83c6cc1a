#!/usr/bin/env bash
# Stop 37 call 6: a phases build (-DDISSECT_ENGINE_PHASES) of HEAD (5d79e65's code): where RC's and
# DC's lone windows spend their cycles under fast and cx7-ib (engine/phases.h lists the marks).
set -u
START=$(date +%s); LIMIT=${LIMIT:-300}
el() { echo "[$(( $(date +%s) - START )) s]"; }
R=$OUT/c6; mkdir -p $R
cp -r .deps/usr/. /usr/ 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
cmake -S . -B /tmp/ph -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDISSECT_WITH_CUDA=ON -DDISSECT_CUDA_ARCHS=90 -DDISSECT_WITH_MLX5=OFF \
  -DDISSECT_WITH_MPI=OFF -DDISSECT_BUILD_TESTS=OFF -DCMAKE_CUDA_FLAGS=-DDISSECT_ENGINE_PHASES > $R/ph_build.log 2>&1 &&
  cmake --build /tmp/ph -j 16 --target dissect >> $R/ph_build.log 2>&1; echo "phases build rc=$? $(el)"
P=/tmp/ph/dissect
for p in fast cx7-ib; do
  timeout 15 $P nic-ceiling --qps 1 --sizes 8 --rounds 1 --runs 1 --nic-profile $p --output $R/ph_rc_$p.json > $R/ph_rc_$p.txt 2>&1
  echo "--- rc $p $(el)"; grep -E "phase cycles" $R/ph_rc_$p.txt | head -1
  timeout 15 $P gpu-latency --quick --runs 1 --transport dc --av compact --nic-profile $p --output $R/ph_dc_$p.json > $R/ph_dc_$p.txt 2>&1
  echo "--- dc $p $(el)"; grep -E "phase cycles" $R/ph_dc_$p.txt | tail -1; grep -E "put\+completion us" $R/ph_dc_$p.txt | grep -v counters | awk '{$NF="";print "   ",$0}'
done
echo "=== done $(el)"
cd $OUT && tar czf c6.tgz c6 && rm -rf c6
