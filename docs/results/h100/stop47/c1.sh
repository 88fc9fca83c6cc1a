#!/usr/bin/env bash
# Stop 47 call 1 (lean): H = main (engine = d4c7b34, stop 45's), M = 13dbd47 (main + stop 46's
# lone_overlap.patch). gpu-load's mini-proxy under cx7-ib with worker send queues of 32 WQEBBs
# (issue 15) first; cx7-ib RC and DC lone paths of H and M interleaved; the 1-QP hops; fast; the
# mended gpu_load_test.proxy_rate on H's dissect; send queues of 64 last.
set -u
source scripts/device_ab.sh
ab_start ${BUDGET:-480} c1
ab_tree h .ab/main.tgz 8 > /dev/null &
ab_tree m .ab/l.tgz 8 > /dev/null &
wait
tail -qn1 $R/h_build.log $R/m_build.log
load() {
  AB_TIMEOUT=80 ab_run h pl_$1 gpu-load --path mini-proxy --nic-profile cx7-ib --background 0,64 --iterations 1000 --runs 2 --ramp-ms 50 --probe-ms 300 --worker-sq-depth $1
  grep -hE "round trip us|background rate|send queue full|in-flight|descriptors per|busy" $R/h_pl_$1.txt | grep -v "^exp" | head -24 | cut -c1-140
  grep -h "bottleneck" $R/h_pl_$1.json | head -4 | cut -c1-300
}
load 32
for round in 1 2; do
  for t in h m; do
    AB_TIMEOUT=30 ab_run $t dc_$round gpu-latency --quick --runs 3 --transport dc --av compact --nic-profile cx7-ib
    grep -hE "put\+completion us|CQE after" $R/${t}_dc_$round.txt | grep -v counters | cut -c1-100
  done
done
for t in h m; do
  ab_run $t nc nic-ceiling --qps 1 --sizes 8 --rounds 1 --runs 1 --nic-profile cx7-ib
  grep -hE " us " $R/${t}_nc.txt | grep -v " - " | cut -c1-120
  AB_TIMEOUT=20 ab_run $t glf gpu-latency --quick --runs 3 --nic-profile fast
  grep -hE "^gpu-latency +(inline|pointer) +put\+completion us" $R/${t}_glf.txt | cut -c1-100
done
if ab_room 100 "proxy_rate test"; then
  timeout 95 python3 tests/gpu/load/load_gpu_test.py /tmp/h-build/dissect proxy_rate > $R/h_proxy_rate_test.txt 2>&1
  echo "proxy_rate test rc=$? $(ab_el)"; tail -3 $R/h_proxy_rate_test.txt
fi
ab_room 85 "load 64" && load 64
echo "=== done $(ab_el)"
ab_pack
