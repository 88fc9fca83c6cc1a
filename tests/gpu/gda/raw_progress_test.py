#!/usr/bin/env python3
"""--raw, --progress and the machine on a GPU experiment of the shared harness (bench/gpu/harness.cuh).

gpu-floor: every run's `raw` holds --iterations samples in us whose median is the run's p50, one
progress line per run of each of its three measurements, counted against the planned total, and
the environment names the GPU it ran on. gpu-telemetry-rate, which times whole runs, refuses --raw
by name. Exit 77 (skipped) without a CUDA device.
usage: raw_progress_test.py path/to/dissect
"""
import json
import os
import re
import subprocess
import sys
import tempfile

dissect = sys.argv[1]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


out = os.path.join(tempfile.mkdtemp(), "floor.json")
run = subprocess.run([dissect, "gpu-floor", "--runs", "2", "--iterations", "200", "--warmup", "100", "--raw",
                      "--progress", "--output", out], capture_output=True, text=True, timeout=600)
if "no CUDA device: skipped" in run.stderr:
    print("no CUDA device: skipped")
    sys.exit(77)
check(run.returncode == 0, f"gpu-floor exited {run.returncode}: {run.stderr}")
lines = [l for l in run.stderr.splitlines() if l.startswith("gpu-floor [")]
check(len(lines) == 6, f"expected 6 progress lines (3 measurements x 2 runs), got {len(lines)}: {run.stderr}")
check(any(re.search(r"\[1/6\] mechanism-floor gpu-fence, run 1/2: .* ETA ", l) for l in lines), f"no ETA: {lines}")
check(bool(lines) and lines[-1].endswith("done"), f"the last line does not say done: {lines}")
doc = json.load(open(out)) if os.path.exists(out) else {"results": []}
check(len(doc["results"]) == 3, f"expected 3 results, got {len(doc['results'])}")
for r in doc["results"]:
    env = r["environment"]
    check(env.get("host") and env.get("cpu_model") and env.get("cpu_cores"), f"{r['label']}: no machine in {env}")
    check(env.get("gpu") not in (None, "", "none"), f"{r['label']}: no GPU named: {env}")
    for m in r["metrics"]:
        if m.get("unit") == "cycles":
            continue  # the cycle counts are each run's percentiles converted, not samples of their own
        for i, s in enumerate(m["runs"]):
            raw = s.get("raw", [])
            check(len(raw) == 200, f"{r['label']} {m['name']} run {i}: {len(raw)} raw samples, expected 200")
            if raw:
                median = sorted(raw)[int(0.5 * (len(raw) - 1) + 0.5)]
                check(abs(median - s["p50"]) <= 1e-3 * max(1.0, s["p50"]), f"{r['label']} run {i}: median {median} != p50 {s['p50']}")
                check(all(v > 0 for v in raw), f"{r['label']} run {i}: a sample <= 0")

refused = subprocess.run([dissect, "gpu-telemetry-rate", "--raw"], capture_output=True, text=True, timeout=60)
check(refused.returncode == 2 and "--raw: gpu-telemetry-rate times whole runs" in refused.stderr,
      f"gpu-telemetry-rate --raw: exit {refused.returncode}, {refused.stderr}")

for f in failures:
    print("FAIL:", f)
print("raw_progress_test:", "ok" if not failures else f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
