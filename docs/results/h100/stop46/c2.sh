#!/usr/bin/env bash
# Stop 46 call 2 (not run: too little device time was left to start it): H = d4c7b34 (stop 45's last), M = HEAD (call 1's N with the held lookup stored
# only when the loop takes the WQE over). cx7-ib RC and DC lone paths, interleaved; the 1-QP hops;
# fast; gpu_load_test.proxy_rate (the held rows) on M.
set -u
source scripts/device_ab.sh
ab_start ${BUDGET:-200} c2
ab_tree h .ab/h.tgz 8 > /dev/null &
ab_tree m .ab/m.tgz 8 > /dev/null &
wait
tail -qn1 $R/h_build.log $R/m_build.log
python3 tests/gpu/load/load_gpu_test.py /tmp/m-build/dissect proxy_rate > $R/m_proxy_rate_test.txt 2>&1; echo "proxy_rate test rc=$?"; tail -3 $R/m_proxy_rate_test.txt
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
echo "=== done $(ab_el)"
ab_pack
