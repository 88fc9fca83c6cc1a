#!/usr/bin/env bash
# Stop 46 call (one call, all of it): H = d4c7b34 (stop 45's last), N = b1743c3+ (a paced lone
# window claims its message's pipe share before reading the WQE; its requester lookup begun at the
# hold, ended after the CQE). N's GPU tier and compute-sanitizer on the paced cases; cx7-ib RC and
# DC put+completion with the CQE lateness, H and N interleaved; fast unchanged?; the 1-QP hops under
# cx7-ib (doorbell -> ring date); gpu-load under cx7-ib (issue 15); the 64-QP cx7-ib rate.
set -u
source scripts/device_ab.sh
ab_start ${BUDGET:-430} c1
ab_tree h .ab/h.tgz 4 > /dev/null &
ab_tier n .ab/n.tgz 12 300
wait
tail -qn1 $R/h_build.log
grep -E "tests passed|tests failed|\*\*\*Failed|Not Run|Timeout" $R/ctest_gpu.log | head -20
dc_ab() {
  for t in h n; do
    AB_TIMEOUT=45 ab_run $t dc_$1 gpu-latency --quick --runs 3 --transport dc --av compact --nic-profile cx7-ib
    grep -hE "put\+completion us|CQE after" $R/${t}_dc_$1.txt | grep -v counters | cut -c1-100
  done
}
dc_ab 1
for t in h n; do
  AB_TIMEOUT=30 ab_run $t glf gpu-latency --quick --runs 3 --nic-profile fast
  grep -hE "^gpu-latency +(inline|pointer) +put\+completion us" $R/${t}_glf.txt | cut -c1-100
  ab_run $t nc nic-ceiling --qps 1 --sizes 8 --rounds 1 --runs 1 --nic-profile cx7-ib
  grep -hE " us " $R/${t}_nc.txt | grep -v " - " | cut -c1-120
done
ab_sanitize window_order_cx7
dc_ab 2
AB_TIMEOUT=90 ab_run n load gpu-load --nic-profile cx7-ib --background 0,64 --iterations 1000
python3 - "$R/n_load.json" <<'PY' 2>/dev/null
import json,sys
for r in json.load(open(sys.argv[1]))["results"]:
    m={x["name"]:x["p50"] for x in r["metrics"]}
    print(f'{r["label"][:52]:52s} rt {m.get("round trip",0):9.2f} bg {m.get("background rate",0):7.2f} backlog {m.get("deepest backlog",0):6.0f} | {r["knobs"].get("bottleneck","")[:120]}')
PY
for t in h n; do
  ab_run $t c64 nic-ceiling --qps 64 --sizes 8 --runs 1 --rounds 4 --nic-profile cx7-ib
  grep -hE "message rate" $R/${t}_c64.txt | head -2 | cut -c1-120
done
AB_TIMEOUT=45 ab_run n dcf gpu-latency --quick --runs 3 --transport dc --av full --nic-profile cx7-ib
grep -hE "put\+completion us|CQE after" $R/n_dcf.txt | grep -v counters | cut -c1-100
echo "=== done $(ab_el)"
ab_pack
