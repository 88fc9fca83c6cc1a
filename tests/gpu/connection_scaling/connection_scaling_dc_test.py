"""gpu-connection-scaling --transport rc,dc (Figure 10b) on tiny configurations (argv[2] the case):

  cx7   cx7-ib, 16 and 64 connections, 8 DCIs: an RC and a DC row a point; every payload valid;
        every DC row names dc_connect_ns as fitted, its DCIs and DCI-destination pairs, connects at
        least once a visit (the connect rule: each visit a new DCT), and stays at or under the
        model ceiling it prints (a ceiling the softnic exceeds is not one)
  fast  fast, 16 connections, 4 DCIs, DC only: payload valid, no connect, no ceiling (nothing waited)

Exit 77 (skipped) without a CUDA device."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from dissect_cli import metric, run  # noqa: E402

dissect, case = sys.argv[1], sys.argv[2]
BASE = ["gpu-connection-scaling", "--runs", "1", "--messages", "65536", "--visit", "256"]
COMMANDS = {
    "cx7": BASE + ["--transport", "rc,dc", "--qps", "16,64", "--dcis", "8", "--nic-profile", "cx7-ib"],
    "fast": BASE + ["--transport", "dc", "--qps", "16", "--dcis", "4", "--nic-profile", "fast"],
}


def p50(row, name):
    found = metric(row, name)
    return found["p50"] if found else None


failures = []
results = run(dissect, COMMANDS[case])
dc = [r for r in results if r["knobs"].get("transport") == "dc"]
rc = [r for r in results if r["knobs"].get("transport") == "rc"]
expected = (2, 2) if case == "cx7" else (1, 0)
if (len(dc), len(rc)) != expected:
    failures.append(f"{len(dc)} DC and {len(rc)} RC rows, expected {expected}")
for r in results:
    k = r["knobs"]
    if not r["payload_validated"]:
        failures.append(f"{r['label']}: payload not validated")
    if r["provider"] != "softnic" or "not a ConnectX" not in r["nic_model"]:
        failures.append(f"{r['label']}: not labelled as the softnic model")
    if k.get("figure") != "10b" or "connections" not in k or "writes_per_visit" not in k:
        failures.append(f"{r['label']}: no figure = 10b, connections or writes_per_visit knob")
    if not (p50(r, "message rate") or 0) > 0:
        failures.append(f"{r['label']}: no message rate")
    waiting = p50(r, "submitters waiting for the model")
    if waiting is None or not 0 <= waiting <= 100:
        failures.append(f"{r['label']}: submitters waiting for the model {waiting}, a share in [0, 100] %")
for r in dc:
    k = r["knobs"]
    for name in ("connections", "dcis", "dci_destination_pairs", "writes_per_visit", "nic_profile", "dc_connect_ns",
                 "model_pipes_mmsgs", "model_dc_engine_mmsgs", "model"):
        if name not in k:
            failures.append(f"{r['label']}: no {name} knob")
    if k.get("dc_connect_check") != "pass":
        failures.append(f"{r['label']}: dc_connect_check {k.get('dc_connect_check')}")
    if int(k.get("dci_destination_pairs", 0)) != int(k.get("dcis", 0)) * int(k.get("connections", 0)):
        failures.append(f"{r['label']}: dci_destination_pairs is not dcis x connections")
    connects, ceiling, rate = p50(r, "DC connects per visit"), p50(r, "model ceiling"), p50(r, "message rate")
    if case == "cx7":
        if "FITTED" not in k.get("dc_connect_ns", ""):
            failures.append(f"{r['label']}: dc_connect_ns not named fitted: {k.get('dc_connect_ns')}")
        if connects is None or connects < 1:
            failures.append(f"{r['label']}: {connects} DC connects per visit, the rule gives at least 1")
        if ceiling is None or ceiling <= 0:
            failures.append(f"{r['label']}: no model ceiling")
        elif rate > 1.1 * ceiling:
            failures.append(f"{r['label']}: {rate:.1f} Mmsg/s above the model ceiling {ceiling:.1f}")
    else:
        if connects != 0:
            failures.append(f"{r['label']}: fast made {connects} DC connects per visit")
        if ceiling is not None:
            failures.append(f"{r['label']}: fast predicts a ceiling {ceiling}")
    print(f"{r['label']}: {rate:.1f} Mmsg/s, ceiling {ceiling}, connects/visit {connects}, "
          f"{k.get('bottleneck', '')}")
for r in rc:
    print(f"{r['label']}: {p50(r, 'message rate'):.1f} Mmsg/s, ceiling {p50(r, 'model ceiling')}")
if failures:
    sys.exit("\n".join(failures))
print(f"ok: {case}")
