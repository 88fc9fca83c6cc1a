"""What the GPU tier's CLI tests share: one `dissect` run into a results file, and a row's metric.

A run on a machine without a CUDA device exits the test with 77, the code CTest reads as skipped,
after the line that says so; any other failure ends the test naming the command and its stderr."""
import json
import os
import subprocess
import sys
import tempfile


def run(dissect, words, timeout=280):
    """The results of `dissect WORDS --output FILE`."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "results.json")
        done = subprocess.run([dissect] + words + ["--output", out], capture_output=True, text=True,
                              timeout=timeout)
        if "no CUDA device: skipped" in done.stderr:
            print("no CUDA device: skipped", file=sys.stderr)
            sys.exit(77)
        if done.returncode != 0:
            sys.exit(f"{' '.join(words)} exited {done.returncode}: {done.stderr}")
        with open(out) as f:
            return json.load(f)["results"]


def metric(row, name):
    """The metric NAME of a result row (its p50, p99 and unit), or None where the row lacks it."""
    return next((m for m in row["metrics"] if m["name"] == name), None)
