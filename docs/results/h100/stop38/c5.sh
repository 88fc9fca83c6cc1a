#!/usr/bin/env bash
# Stop 38 call 5: a phases build (-DDISSECT_ENGINE_PHASES) of the landing code (458c0bb's engine):
# where RC's lone window spends its cycles under cx7-ib and fast, nic-ceiling and gpu-latency.
set -u
START=$(date +%s)
el() { echo "[$(( $(date +%s) - START )) s]"; }
R=$OUT/c5; mkdir -p $R
cp -r .deps/usr/. /usr/ 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
cmake -S . -B /tmp/ph -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDISSECT_WITH_CUDA=ON -DDISSECT_CUDA_ARCHS=90 -DDISSECT_WITH_MLX5=OFF \
  -DDISSECT_WITH_MPI=OFF -DDISSECT_BUILD_TESTS=OFF -DCMAKE_CUDA_FLAGS=-DDISSECT_ENGINE_PHASES > $R/ph_build.log 2>&1 &&
  cmake --build /tmp/ph -j 16 --target dissect >> $R/ph_build.log 2>&1; echo "phases build rc=$? $(el)"
P=/tmp/ph/dissect
for p in cx7-ib fast; do
  timeout 15 $P nic-ceiling --qps 1 --sizes 8 --rounds 1 --runs 1 --nic-profile $p --output $R/ph_nc_$p.json > $R/ph_nc_$p.txt 2>&1
  echo "--- nc $p $(el)"; grep -E "phase cycles" $R/ph_nc_$p.txt | head -1
  timeout 15 $P gpu-latency --quick --runs 1 --nic-profile $p --output $R/ph_gl_$p.json > $R/ph_gl_$p.txt 2>&1
  echo "--- gl $p $(el)"; grep -E "phase cycles" $R/ph_gl_$p.txt | tail -1; grep -E "^gpu-latency +inline +put\+completion us" $R/ph_gl_$p.txt | awk '{$NF="";print "   ",$0}'
done
echo "=== done $(el)"
rm -f $R/ph_build.log
cd $OUT && tar czf c5.tgz c5 && rm -rf c5
