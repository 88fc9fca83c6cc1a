#!/usr/bin/env python3
"""Per-WQE engine phases from a -DDISSECT_ENGINE_PHASES build's output.

Every engine stop prints the cumulative counters ("dissect: engine phase cycles (all warps): 0:N
1:N ..."); consecutive prints differ by what ran in between (one row of gpu-latency, one case of
nic-ceiling). For each difference with lone windows in it, this prints the lone-path phases
divided by the lone windows (phase 15), in cycles, and the held WQE's dates in ns (19, 20, 25).
The phase numbers are src/softnic/engine/phases.h's.

    scripts/engine_phases.py OUTPUT.txt...
"""
import re
import sys

# phases.h: what each number counts (cycles unless named ns)
NAMES = {
    16: "watch",
    0: "head",
    27: "head+checks",
    12: "read+check",
    13: "to stamp/hold",
    14: "payload+CQE+retire",
    17: "connection model",
    18: "pipe claims",
    8: "visit",
    19: "hold late ns",
    25: "hold early ns",
    20: "CQE late ns",
}
LONE_WINDOWS = 15


def prints(path):
    """The counter prints of `path`, in order, each a dict phase -> value."""
    out = []
    with open(path) as f:
        for line in f:
            if "engine phase cycles" in line:
                out.append({int(k): int(v) for k, v in re.findall(r" (\d+):(\d+)", line)})
    return out


def main(paths):
    for path in paths:
        print(path)
        previous = {}
        for n, counters in enumerate(prints(path), 1):
            delta = {k: v - previous.get(k, 0) for k, v in counters.items()}
            previous = counters
            lone = delta.get(LONE_WINDOWS, 0)
            if lone == 0:
                continue
            cells = "  ".join(f"{name} {delta.get(k, 0) / lone:.0f}" for k, name in NAMES.items())
            print(f"  print {n}, {lone} lone WQEs: {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
