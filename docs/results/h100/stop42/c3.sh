#!/usr/bin/env bash
# Stop 42 call 3: a phases build (-DDISSECT_ENGINE_PHASES) of N (d7c38ed): where the DC lone
# window's cycles go beside RC's, gpu-latency --transport dc under cx7-ib and fast (each engine
# stop prints the cumulative counters: consecutive prints differ by one row's WQEs).
set -u
source scripts/device_ab.sh
ab_start 420 c3
AB_CMAKE_FLAGS=-DCMAKE_CUDA_FLAGS=-DDISSECT_ENGINE_PHASES ab_tree ph .ab/n.tgz 16 > /dev/null
tail -n1 $R/ph_build.log
for p in cx7-ib fast; do
  for av in compact full; do
    AB_TIMEOUT=40 ab_run ph dc_${av}_$p gpu-latency --quick --runs 1 --transport dc --av $av --nic-profile $p
    grep -E "put\+completion us" $R/ph_dc_${av}_$p.txt | cut -c1-100
    grep -c "phase cycles" $R/ph_dc_${av}_$p.txt
  done
done
rm -f $R/ph_build.log
echo "=== done $(ab_el)"
ab_pack
