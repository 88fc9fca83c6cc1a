#!/usr/bin/env bash
# Stop 45 call 1: H = c221244 (stop 43's last), N = HEAD (stop 44's counter, QpContext padded to
# 16 B, the posting rate, gpu-rate --deep-queue, gpu-load's backlog). N's GPU tier; the latency of H and N interleaved;
# the one-QP ceilings; Table 5 with each send queue holding its run (the submitters' own pace).
set -u
source scripts/device_ab.sh
ab_start ${BUDGET:-420} c1
ab_tree h .ab/h.tgz 5 > /dev/null &
ab_tier n .ab/n.tgz 11 300
wait
tail -qn1 $R/h_build.log
grep -E "tests passed|tests failed|Failed|\*\*\*Failed|Not Run|Timeout" $R/ctest_gpu.log | head -20
ab_sanitize backlog_runs
for round in 1 2; do
  for t in h n; do
    AB_TIMEOUT=30 ab_run $t glf_$round gpu-latency --quick --runs 3 --nic-profile fast
    grep -hE "^gpu-latency +(inline|pointer) +put\+completion us" $R/${t}_glf_$round.txt | cut -c1-110
  done
  for t in h n; do
    ab_run $t c1_$round nic-ceiling --qps 1 --sizes 8 --runs 3 --rounds 4
    grep -hE "message rate" $R/${t}_c1_$round.txt | head -1 | cut -c1-120
  done
done
for t in h n; do
  AB_TIMEOUT=40 ab_run $t glc_1 gpu-latency --quick --runs 3 --nic-profile cx7-ib
  grep -hE "^gpu-latency +(inline|pointer) +put\+completion us" $R/${t}_glc_1.txt | cut -c1-110
done
AB_TIMEOUT=150 ab_run n deep gpu-rate --sweep --deep-queue --runs 3
grep -hE "message rate|posting rate" $R/n_deep.txt | cut -c1-150
python3 - "$R/n_deep.json" <<'PY' 2>/dev/null
import json,sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(r["label"][:60], "|", r["knobs"].get("sq_wqebbs"), r["knobs"].get("messages_per_thread"), "|", r["knobs"].get("bottleneck","")[:150])
PY
AB_TIMEOUT=60 ab_run n load gpu-load --path mini-gda --quick --background 16,64
grep -hE "background rate" $R/n_load.txt | cut -c1-150
python3 - "$R/n_load.json" <<'PY' 2>/dev/null
import json,sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(r["label"][:60], "|", r["knobs"].get("bottleneck","")[:150])
PY
echo "=== done $(ab_el)"
ab_pack
