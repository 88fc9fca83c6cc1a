"""gpu-load and gpu-goodput on tiny configurations (argv[2] picks the case):

  load        both paths, 0 and 2 background CTAs per endpoint, shared and reserved probe
  load_paced  both paths, reserved probe, 2 background CTAs paced to 1 Mmsg/s: the carried rate
              stays within 0.5-1.5x of the target (the pacer is neither ignored nor stalled)
  goodput     both paths at 8 B and 4 KiB: goodput rows with the reference and the 90 % point
  proxy_rate  gpu-proxy-rate at T = 1, 2 and B = 1, 4 on 4 rings, with a batch sweep point, and the
              grid's T = 1 points repeated with each worker queue holding the run: every
              destination word checked, chains within 1..B (exactly 1 at B = 1), the ceiling and
              the bottleneck on every row, each worker's clock state recorded; the held rows'
              posting rate (the workers' own pace) and the model's deepest backlog

Every row must validate its payload. Exit 77 (skipped) without a CUDA device."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from dissect_cli import metric, run  # noqa: E402

dissect, case = sys.argv[1], sys.argv[2]
LOAD = ["gpu-load", "--background", "0,2", "--iterations", "50", "--warmup", "5", "--probe-ms", "50",
        "--ramp-ms", "5", "--runs", "1", "--rings-per-endpoint", "2", "--workers", "2"]
COMMANDS = {
    "load": LOAD + ["--probe", "shared,reserved"],
    "load_paced": LOAD[:2] + ["2"] + LOAD[3:] + ["--probe", "reserved", "--pace-mops", "1"],
    "goodput": ["gpu-goodput", "--sizes", "8,4096", "--ctas", "2", "--workers", "2", "--runs", "1",
                "--bytes", "1048576", "--max-messages", "16384"],
    "proxy_rate": ["gpu-proxy-rate", "--workers", "1,2", "--batches", "1,4", "--batch-sweep", "2", "--rings", "4",
                   "--messages", "65536", "--runs", "1"],
}


failures = []
results = run(dissect, COMMANDS[case])
for r in results:
    if not r["payload_validated"]:
        failures.append(f"{r['label']}: payload not validated ({r['knobs'].get('note', '')})")
    if r["nic_model"] == "" or r["provider"] != "softnic":
        failures.append(f"{r['label']}: not labelled as the softnic model")
if case.startswith("load"):
    expected = 2 * (2 if case == "load" else 1) * (2 if case == "load" else 1)
    if len(results) != expected:
        failures.append(f"{len(results)} rows, expected {expected}")
    for r in results:
        k = r["knobs"]
        for name in ("round trip", "round trip p99", "background rate"):
            if metric(r, name) is None:
                failures.append(f"{r['label']}: metric {name} missing")
        trip = metric(r, "round trip")
        if trip and not trip["p50"] > 0:
            failures.append(f"{r['label']}: round trip p50 {trip['p50']}")
        background = int(k["background CTAs per endpoint"])
        rate = metric(r, "background rate")["p50"]
        if (background == 0) != (rate == 0):
            failures.append(f"{r['label']}: background rate {rate} Mmsg/s with {background} CTAs")
        if background and k["path"] == "mini-gda" and "bottleneck" not in k:
            failures.append(f"{r['label']}: no bottleneck knob")
        if k["path"] == "mini-proxy":
            chain = metric(r, "descriptors per post")
            busy = metric(r, "worker busy passes")
            if chain is None or not 1 <= chain["p50"] <= 16:  # --proxy-batch defaults to 16
                failures.append(f"{r['label']}: descriptors per post {chain and chain['p50']} outside 1..16")
            if busy is None or not 0 < busy["p50"] <= 100:
                failures.append(f"{r['label']}: worker busy passes {busy and busy['p50']} %")
        # A pacer that is ignored carries tens of Mmsg/s here, one that stalls carries nothing;
        # how close to the target it carries is the benchmark's to report (Table 11 prints it
        # beside the target), not a timed assertion: the H200 gave 1.14 in one of three runs on
        # 2026-12-02, against a 1.1 bound; the schedule's logic the CPU tier checks exactly
        # (gpu_plan_test, Pacing).
        if case == "load_paced" and background and not 0.5 <= rate <= 1.5:
            failures.append(f"{r['label']}: paced to 1 Mmsg/s, carried {rate}")
    if {r["knobs"]["path"] for r in results} != {"mini-gda", "mini-proxy"}:
        failures.append("both paths expected")
elif case == "proxy_rate":
    HOLDING = ", queue holding the run"  # bench/gpu/rate_bound.h
    labels = sorted(r["label"] for r in results)
    if labels != sorted(["T=1 R=4 B=1", "T=2 R=4 B=1", "T=1 R=4 B=4", "T=2 R=4 B=4", "T=1 R=4 B=2",
                         "T=1 R=4 B=1" + HOLDING, "T=1 R=4 B=4" + HOLDING]):
        failures.append(f"rows {labels}")
    for r in results:
        if not r["label"].endswith(HOLDING):
            continue
        posting, backlog = metric(r, "posting rate"), metric(r, "deepest backlog")
        if posting is None or not posting["p50"] > 0 or backlog is None or "worker sq_wqebbs" not in r["knobs"]:
            failures.append(f"{r['label']}: posting rate, deepest backlog or worker sq_wqebbs missing")
    for r in results:
        k, batch = r["knobs"], int(r["knobs"]["batch (B)"])
        rate, chain = metric(r, "message rate"), metric(r, "descriptors per post")
        if rate is None or not rate["p50"] > 0:
            failures.append(f"{r['label']}: no message rate")
        if chain is None or not 1 <= chain["p50"] <= batch or (batch == 1 and chain["p50"] != 1):
            failures.append(f"{r['label']}: descriptors per post {chain and chain['p50']} outside 1..{batch}")
        full = metric(r, "send queue full passes")
        if full is None or not 0 <= full["p50"] <= 100:
            failures.append(f"{r['label']}: send queue full passes {full and full['p50']} %")
        if metric(r, "model ceiling") is None or "bottleneck" not in k:
            failures.append(f"{r['label']}: model ceiling or bottleneck missing")
        env = dict(r["environment"]) if isinstance(r["environment"], list) else r["environment"]
        workers = int(k["workers (T)"])
        if any(f"worker{w}.scaling_governor" not in env for w in range(workers)) or "worker pinning" not in env:
            failures.append(f"{r['label']}: a worker's clock state or the pinning is missing")
else:
    if len(results) != 4:
        failures.append(f"{len(results)} rows, expected 4")
    for r in results:
        k = r["knobs"]
        for knob in ("path", "payload bytes", "reference", "reference GB/s", "first_size_at_90pct", "at_90pct_star"):
            if knob not in k:
                failures.append(f"{r['label']}: knob {knob} missing")
        g = metric(r, "goodput")
        if g is None or not g["p50"] > 0:
            failures.append(f"{r['label']}: no goodput")
    for path in ("mini-gda", "mini-proxy"):
        stars = [r for r in results if r["knobs"]["path"] == path and r["knobs"]["at_90pct_star"] == "yes"]
        first = {r["knobs"]["first_size_at_90pct"] for r in results if r["knobs"]["path"] == path}
        if len(first) != 1 or len(stars) > 1 or (stars == []) != (first == {"not reached"}):
            failures.append(f"{path}: first size {first}, stars {[r['label'] for r in stars]}")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
