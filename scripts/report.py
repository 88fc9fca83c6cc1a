#!/usr/bin/env python3
"""Turns dissect's results.json into report.md with tables, the paper's values and PNG plots.

usage: report.py RESULTS_JSON OUTPUT_DIR [TELEMETRY_JSON]

report.md opens with a summary (machine, SM clock, provider and NIC profile, the fidelity
verdicts at a glance), then one section per experiment whose tables carry the paper's value
(docs/paper/values.json) and ours / paper beside each metric that has a counterpart, a fidelity
section that judges every finding of the paper, our own checks, and any experiment recorded as
failed ({"experiment": ..., "failed": true, "error": ...}). With TELEMETRY_JSON (the file
DISSECT_TELEMETRY_ENABLE=1 writes) it adds a telemetry summary. Plots need matplotlib; without
it the report says which plots were skipped. The code lives in scripts/dissect_report/.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dissect_report import document, paper, results  # noqa: E402


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    data = results.Results(results.load(sys.argv[1]))
    values = paper.load(os.environ.get("DISSECT_PAPER_VALUES", paper.DEFAULT_PATH))
    document.write(data, values, sys.argv[2], sys.argv[3] if len(sys.argv) == 4 else None)


if __name__ == "__main__":
    main()
