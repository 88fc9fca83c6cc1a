"""gpu-kernel-cost on 8 blocks with short work: every case of both paths (mini-gda, mini-proxy),
both callers and both builds runs, validates its payload, and carries the loss, registers, local
memory and residency its row explains. Exit 77 (skipped) without a CUDA device."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from dissect_cli import run  # noqa: E402

results = run(sys.argv[1], ["gpu-kernel-cost", "--blocks", "8", "--live", "8", "--messages", "1,4", "--sizes",
                            "8,7K", "--compute-steps", "4096", "--stream-steps", "1024", "--runs", "1"], timeout=240)

failures = []
# Per path and caller: the baseline, then per build: code only and send / send-wait x 2 counts x
# 2 sizes.
expected = 2 * 2 * (1 + 2 * (1 + 2 * 2 * 2))
if len(results) != expected:
    failures.append(f"{len(results)} results, expected {expected}")
for r in results:
    k, label = r["knobs"], r["label"]
    names = [m["name"] for m in r["metrics"]]
    if not r["payload_validated"]:
        failures.append(f"{label}: payload not validated")
    if float(r["environment"].get("sm_clock_mhz", "0")) <= 0:
        failures.append(f"{label}: no effective SM clock")
    for knob in ("registers_per_thread", "local_bytes_per_thread", "resident_blocks_per_sm", "waves"):
        if knob not in k:
            failures.append(f"{label}: knob {knob} missing")
    if int(k.get("registers_per_thread", "0")) <= 0 or int(k.get("resident_blocks_per_sm", "0")) <= 0:
        failures.append(f"{label}: registers {k.get('registers_per_thread')}, resident blocks "
                        f"{k.get('resident_blocks_per_sm')}")
    baseline = k["variant"] == "no communication code"
    if baseline == ("throughput loss" in names) or "useful work" not in names:
        failures.append(f"{label}: metrics {names}")
    if not baseline and "baseline_registers_per_thread" not in k:
        failures.append(f"{label}: the baseline's registers are not beside its own")
paths = {r["knobs"]["path"] for r in results}
if paths != {"mini-gda", "mini-proxy"}:
    failures.append(f"paths {sorted(paths)}")
builds = {r["knobs"]["build"] for r in results}
if builds != {"none", "inlined", "separate (-rdc)"}:
    failures.append(f"builds {sorted(builds)}")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
