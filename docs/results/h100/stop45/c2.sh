#!/usr/bin/env bash
# Stop 45 call 2: N = HEAD (the held run's bottleneck from the backlog's share of the run; the sweep
# repeats the one-QP sharing rows with each queue holding its run). gpu-rate --sweep, three runs.
set -u
source scripts/device_ab.sh
ab_start ${BUDGET:-330} c2
ab_tree n .ab/n.tgz 14
AB_TIMEOUT=240 ab_run n sweep gpu-rate --sweep --runs 3
grep -hE "message rate|posting rate" $R/n_sweep.txt | cut -c1-150
python3 - "$R/n_sweep.json" <<'PY' 2>/dev/null
import json,sys
for r in json.load(open(sys.argv[1]))["results"]:
    m={x["name"]:x["p50"] for x in r["metrics"]}
    print(r["label"][:70], "| backlog", m.get("deepest backlog"), "|", r["knobs"].get("bottleneck","")[:140])
PY
echo "=== done $(ab_el)"
ab_pack
