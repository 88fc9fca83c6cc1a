#!/usr/bin/env python3
"""perftest-grade output of `dissect latency`: a size sweep (--sizes, and nccl-tests' -b -e -f),
perftest's latency columns per run, --raw samples, --csv rows; the JSON against
docs/results.schema.json.

usage: sweep_output_test.py DISSECT REPO_ROOT   (exit 77, skipped, without python3-jsonschema)
"""
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

DISSECT, ROOT = sys.argv[1], sys.argv[2]
sys.argv[1:] = []
try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed: skipped")
    sys.exit(77)

FAST = ["--quick", "--runs", "2", "--iterations", "200", "--warmup", "20", "--quiet"]


def run(*args, check=True):
    p = subprocess.run([DISSECT, *args], capture_output=True, text=True, timeout=300)
    if check and p.returncode != 0:
        raise AssertionError(f"dissect {' '.join(args)} -> {p.returncode}: {p.stderr}")
    return p


def perftest(samples):
    """print_report_lat's columns, written from its definitions (perftest_parameters.c)."""
    d = sorted(samples)
    n = len(d)
    kept = n - 2 if n > 2 else n
    if (kept - 1) % 2:
        typical = (d[kept // 2] + d[kept // 2 - 1]) / 2
    else:
        typical = d[kept // 2]
    avg = sum(d[:kept]) / kept
    stdev = math.sqrt(sum((avg - x) ** 2 for x in d[:kept]) / kept)
    at = lambda i: d[min(i, n - 1)]
    return {"t_min": d[0], "t_max": at(kept), "t_typical": typical, "t_avg": avg, "t_stdev": stdev,
            "t_p99": at(math.ceil(kept * 0.99)), "t_p99_9": at(math.ceil(kept * 0.999)),
            "tail_dropped": n - kept}


class Sweep(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(ROOT, "docs/results.schema.json")) as f:
            cls.validator = jsonschema.Draft202012Validator(json.load(f))
        cls.dir = tempfile.mkdtemp()
        cls.plain = os.path.join(cls.dir, "r.json")
        cls.raw = os.path.join(cls.dir, "raw.json")
        cls.csv = os.path.join(cls.dir, "r.csv")
        cls.out = run("latency", "--sizes", "8,64,512", "--output", cls.plain, "--csv", cls.csv, *FAST).stdout
        run("latency", "--sizes", "8,64,512", "--output", cls.raw, "--raw", *FAST)

    def load(self, path):
        with open(path) as f:
            doc = json.load(f)
        self.assertEqual([e.message for e in self.validator.iter_errors(doc)], [], path)
        return doc

    def test_one_result_per_size_and_case(self):
        doc = self.load(self.plain)
        labels = [r["label"] for r in doc["results"]]
        # 512 B is beyond the 220 B inline limit: the pointer write only.
        self.assertEqual(labels, ["inline 8 B", "pointer 8 B", "inline 64 B", "pointer 64 B", "pointer 512 B"])
        for r in doc["results"]:
            self.assertEqual(r["knobs"]["bytes"], r["label"].split()[1])
            self.assertTrue(r["payload_validated"])

    def test_perftest_columns_per_run(self):
        doc = self.load(self.plain)
        for r in doc["results"]:
            self.assertEqual([m["name"] for m in r["metrics"]], ["issue", "put+completion", "round trip"])
            for m in r["metrics"]:
                self.assertEqual(len(m["runs"]), 2)
                for run_ in m["runs"]:
                    self.assertEqual(run_["samples"], 200)
                    self.assertEqual(run_["tail_dropped"], 2)
                    self.assertNotIn("raw", run_)
                    self.assertLessEqual(run_["t_min"], run_["t_typical"])
                    self.assertLessEqual(run_["t_typical"], run_["t_max"])
                    self.assertLessEqual(run_["t_p99"], run_["t_p99_9"])
                    self.assertGreaterEqual(run_["t_stdev"], 0)
        self.assertIn("t_typical", self.out)
        self.assertIn("99.9%", self.out)

    def test_raw_samples_give_the_columns(self):
        doc = self.load(self.raw)
        for r in doc["results"]:
            for m in r["metrics"]:
                for run_ in m["runs"]:
                    self.assertEqual(len(run_["raw"]), run_["samples"])
                    for key, value in perftest(run_["raw"]).items():
                        self.assertAlmostEqual(run_[key], value, places=9, msg=f"{r['label']} {m['name']} {key}")

    def test_csv_has_a_row_per_run_and_metric(self):
        doc = self.load(self.plain)
        with open(self.csv) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), sum(len(m["runs"]) for r in doc["results"] for m in r["metrics"]))
        first = doc["results"][0]["metrics"][0]["runs"][1]
        row = [x for x in rows if x["label"] == "inline 8 B" and x["metric"] == "issue" and x["run"] == "1"][0]
        self.assertEqual(row["bytes"], "8")
        self.assertAlmostEqual(float(row["t_typical"]), first["t_typical"], places=6)
        self.assertEqual(row["tail_dropped"], "2")

    def test_nccl_tests_range_is_the_same_sweep(self):
        path = os.path.join(self.dir, "b.json")
        run("latency", "-b", "8", "-e", "512", "-f", "8", "--output", path, *FAST)
        self.assertEqual([r["knobs"]["bytes"] for r in self.load(path)["results"]], ["8", "8", "64", "64", "512"])

    def test_bad_sweeps_are_refused(self):
        for args, words in ((["--sizes", "8", "-b", "8", "-e", "64"], "--sizes and -b/-e/-f"),
                            (["--sizes", "4"], "out of range [8, 2048]"),
                            (["--sizes", "8,x"], "'x' is not a size"),
                            (["-b", "8"], "go together"),
                            (["-b", "64", "-e", "8"], "larger than"),
                            (["-b", "8", "-e", "64", "-f", "1"], "--step-factor")):
            p = run("latency", *args, "--quick", check=False)
            self.assertEqual(p.returncode, 2, args)
            self.assertIn(words, p.stderr, args)


class ProgressLines(unittest.TestCase):
    ARGS = ["latency", "--sizes", "8,512", "--quick", "--runs", "1", "--iterations", "50", "--warmup", "5"]

    def lines(self, stderr):
        return [l for l in stderr.splitlines() if l.startswith("latency [")]

    def test_progress_prints_a_line_per_case_with_an_eta(self):
        lines = self.lines(run(*self.ARGS, "--progress").stderr)
        self.assertEqual(len(lines), 3, lines)  # inline 8 B, pointer 8 B, pointer 512 B
        self.assertRegex(lines[0], r"^latency \[1/3\] inline 8 B: [0-9.]+ s, ETA [0-9.]+ s$")
        self.assertRegex(lines[2], r"^latency \[3/3\] pointer 512 B: [0-9.]+ s, done$")

    def test_quiet_when_not_a_terminal_or_asked(self):
        self.assertEqual(self.lines(run(*self.ARGS).stderr), [])
        self.assertEqual(self.lines(run(*self.ARGS, "--quiet").stderr), [])
        p = run(*self.ARGS, "--quiet", "--progress", check=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--quiet and --progress", p.stderr)

    def test_a_terminal_gets_lines_unless_quiet(self):
        import pty
        for extra, expected in (([], 3), (["--quiet"], 0)):
            leader, follower = pty.openpty()
            p = subprocess.run([DISSECT, *self.ARGS, *extra], stdout=subprocess.DEVNULL, stderr=follower,
                               timeout=300)
            os.close(follower)
            text = b""
            while True:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                text += chunk
            os.close(leader)
            self.assertEqual(p.returncode, 0)
            self.assertEqual(len(self.lines(text.decode().replace("\r", ""))), expected, extra)


if __name__ == "__main__":
    unittest.main(verbosity=2)
