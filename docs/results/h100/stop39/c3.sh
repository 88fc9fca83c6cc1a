#!/usr/bin/env bash
# Stop 39 call 3: where a paced window's time goes. H = e1b3f78 (stop 38), N = 6925ee5 (held
# windows in both engines), M = b2f8b2e (held windows in the host engine only; the GPU's paced
# kernel as H's), and a phases build of N. Profiles: fast, cx7-ib and three files that keep one
# part of cx7-ib each (zero: paced, nothing modelled; latency: the latencies alone; nomodel:
# cx7-ib without the connection-state model).
set -u
source scripts/device_ab.sh
ab_start 560 c3
ab_tree h .ab/h.tgz 4 > /dev/null &
ab_tree m .ab/m.tgz 4 > /dev/null &
AB_CMAKE_FLAGS=-DCMAKE_CUDA_FLAGS=-DDISSECT_ENGINE_PHASES ab_tree p .ab/n.tgz 4 > /dev/null &
ab_tree n .ab/n.tgz 4
wait
tail -qn1 $R/*_build.log
P=".ab/zero.nic .ab/latency.nic .ab/nomodel.nic"
for p in fast cx7-ib $P; do for t in h n m; do
  ab_run $t nc_$(basename $p .nic) nic-ceiling --qps 1,8 --sizes 8 --runs 1 --rounds 3 --nic-profile $p
  echo "    $t $p: $(grep -E 'message rate' $R/${t}_nc_$(basename $p .nic).txt | awk '{print $(NF-3)}' | tr '\n' ' ')"
done; done
for round in 1 2; do for t in h m n; do
  ab_run $t glc_$round gpu-latency --quick --runs 3 --nic-profile cx7-ib
  ab_grep $t glc_$round "^gpu-latency +(inline|pointer) +put\+completion us"
done; done
for p in fast cx7-ib $P; do for t in h n; do
  AB_TIMEOUT=40 ab_run $t cs_$(basename $p .nic) gpu-connection-scaling --direction send --qps 64 --visit 32 --runs 1 --nic-profile $p
  echo "    $t $p: $(grep -E 'message rate' $R/${t}_cs_$(basename $p .nic).txt | awk '{print $(NF-3)}' | tr '\n' ' ')"
done; done
for p in cx7-ib .ab/zero.nic; do
  ab_run p nc_$(basename $p .nic) nic-ceiling --qps 1 --sizes 8 --runs 1 --rounds 3 --nic-profile $p
  grep -E "phase cycles" $R/p_nc_$(basename $p .nic).txt | tail -1
  AB_TIMEOUT=40 ab_run p cs_$(basename $p .nic) gpu-connection-scaling --direction send --qps 64 --visit 32 --runs 1 --nic-profile $p
  grep -E "phase cycles" $R/p_cs_$(basename $p .nic).txt | tail -1
done
echo "=== done $(ab_el)"
ab_pack
