#!/usr/bin/env bash
# Stop 42 call 1: H = 5f31f45 (stop 41's last), N = d7c38ed (the DC lone window's inline bytes from
# registers; the sweep two slots a lane without the state's acquire once live; the cx7-ib QP-set
# GPU test). N's GPU tier; DC - RC put+completion under cx7-ib on H and N interleaved; the fast
# path beside H; long reuse send-only at 32,768 QPs on H and N; the new case under
# compute-sanitizer.
set -u
source scripts/device_ab.sh
ab_start 575 c1
ab_tree h .ab/h.tgz 5 > /dev/null &
ab_tier n .ab/n.tgz 11 330
wait
tail -qn1 $R/h_build.log
grep -E "tests passed|tests failed|Failed|\*\*\*Failed|Not Run|Timeout" $R/ctest_gpu.log | head -20
grep -E "many_qps" $R/ctest_gpu.log | head -6
for av in compact full; do
  for t in h n; do
    AB_TIMEOUT=45 ab_run $t dc_$av gpu-latency --quick --runs 5 --transport dc --av $av --nic-profile cx7-ib
    grep -E "put\+completion us" $R/${t}_dc_$av.txt | cut -c1-100
  done
done
for t in h n; do
  AB_TIMEOUT=30 ab_run $t glf gpu-latency --quick --runs 3 --nic-profile fast
  grep -hE "^gpu-latency +(inline|pointer) +put\+completion us" $R/${t}_glf.txt | cut -c1-110
  ab_run $t c64 nic-ceiling --qps 64 --sizes 8 --runs 1 --rounds 4
  grep -hE "message rate" $R/${t}_c64.txt | head -1 | cut -c1-120
done
ab_sanitize many_qps_one_warp_cx7_stepped
for t in n h; do
  AB_TIMEOUT=90 ab_run $t l_send gpu-connection-scaling --direction send --qps 32768 --visit 8192 --runs 1 --nic-profile cx7-ib
  grep -E "message rate|model ceiling|waiting|bottleneck" $R/${t}_l_send.txt | cut -c24-160
done
echo "=== done $(ab_el)"
ab_pack
