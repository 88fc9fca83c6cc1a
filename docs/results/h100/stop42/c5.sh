#!/usr/bin/env bash
# Stop 42 call 5: L = 783b42f (gpu-latency's CQE lateness against the profile's dates), its DC and
# RC rows under cx7-ib and fast; scripts/probes/lone_costs.cu (what a held lone WQE's release
# steps cost one lane alone).
set -u
source scripts/device_ab.sh
ab_start 400 c5
nvcc -O2 -arch=sm_90 -o /tmp/lone_costs scripts/probes/lone_costs.cu && /tmp/lone_costs | tee $R/lone_costs.txt &
ab_tree l .ab/l.tgz 16 > /dev/null
wait
tail -n1 $R/l_build.log
for av in compact full; do
  AB_TIMEOUT=45 ab_run l dc_$av gpu-latency --quick --runs 3 --transport dc --av $av --nic-profile cx7-ib
  grep -E "put\+completion us|CQE after" $R/l_dc_$av.txt | cut -c1-110
done
grep -m3 -o "the engine stamped[^;]*" $R/l_dc_compact.txt
AB_TIMEOUT=30 ab_run l glf gpu-latency --quick --runs 3 --nic-profile fast
grep -E "put\+completion us|CQE after" $R/l_glf.txt | cut -c1-110
echo "=== done $(ab_el)"
ab_pack
