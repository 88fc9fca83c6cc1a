#!/usr/bin/env bash
# Stop 45 call 3: N = HEAD (mini-proxy workers' own posting pace; gpu-proxy-rate's T = 1 points
# repeated with each worker queue holding the run). Figure 7 with GPU producers, fast and cx7-ib.
set -u
source scripts/device_ab.sh
ab_start ${BUDGET:-330} c3
ab_tree n .ab/n.tgz 14
AB_TIMEOUT=120 ab_run n pr gpu-proxy-rate --workers 1,2,4,8 --batch-sweep 1,4,16 --runs 3
AB_TIMEOUT=60 ab_run n prc gpu-proxy-rate --workers 1,4 --batch-sweep 1,16 --runs 2 --nic-profile cx7-ib
for run in pr prc; do
python3 - "$R/n_$run.json" <<'PY' 2>/dev/null
import json,sys
for r in json.load(open(sys.argv[1]))["results"]:
    m={x["name"]:x["p50"] for x in r["metrics"]}
    print(f'{r["label"][:44]:44s} msg {m.get("message rate",0):7.2f} post {m.get("posting rate",0):7.2f} ceil {m.get("model ceiling",0):6.1f} backlog {m.get("deepest backlog",0):6.0f} full% {m.get("send queue full passes",0):5.1f} busy% {m.get("worker busy passes",0):5.1f} | {r["knobs"].get("bottleneck","")[:110]}')
PY
done
echo "=== done $(ab_el)"
ab_pack
