#!/usr/bin/env python3
"""scripts/report.py as a performance oracle: the results schema, the paper columns, the fidelity
section, and a report that survives a failed experiment.

usage: report_test.py REPO_ROOT schema|report
  schema: results.json against docs/results.schema.json (exit 77, skipped, without python3-jsonschema;
          scripts/bootstrap.sh installs it)
  report: the paper values file and report.py's output
"""
import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PART = sys.argv[2] if len(sys.argv) > 2 else "report"
sys.argv[1:] = []
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from dissect_report import fidelity, paper, results  # noqa: E402

try:
    import jsonschema
except ImportError:
    jsonschema = None

H200 = os.path.join(ROOT, "docs/results/h200/latest/results.json")
CPU = os.path.join(ROOT, "tests/cpu/report/cpu_results.json")
SCHEMA = os.path.join(ROOT, "docs/results.schema.json")
REPORT = os.path.join(ROOT, "scripts/report.py")


def load(path):
    with open(path) as f:
        return json.load(f)


def render(doc, extra_env=None):
    """report.md for `doc`, as report_command.cpp runs it: python3 report.py RESULTS OUTPUT_DIR."""
    out = tempfile.mkdtemp()
    path = os.path.join(out, "results.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    env = dict(os.environ, **(extra_env or {}))
    subprocess.run([sys.executable, REPORT, path, out], check=True, env=env, capture_output=True)
    with open(os.path.join(out, "report.md")) as f:
        return f.read()


class Schema(unittest.TestCase):
    def setUp(self):
        if jsonschema is None:
            self.skipTest("python3-jsonschema is not installed")
        self.validator = jsonschema.Draft202012Validator(load(SCHEMA))

    def test_h200_and_cpu_results_validate(self):
        for path in (H200, CPU):
            errors = [e.message for e in self.validator.iter_errors(load(path))]
            self.assertEqual(errors, [], path)

    def test_failed_record_validates(self):
        doc = {"schema": "dissect.results/1", "command": "t",
               "results": [{"experiment": "goodput", "failed": True, "error": "payload check failed"}]}
        self.assertTrue(self.validator.is_valid(doc))

    def test_malformed_rejected(self):
        doc = load(CPU)
        del doc["results"][0]["metrics"][0]["p50"]
        self.assertFalse(self.validator.is_valid(doc))
        doc = load(CPU)
        doc["results"][0]["knobs"]["bytes"] = 8  # knobs are strings
        self.assertFalse(self.validator.is_valid(doc))
        self.assertFalse(self.validator.is_valid({"schema": "dissect.results/1", "command": "t",
                                                  "results": [{"experiment": "x", "failed": True}]}))


class PaperValues(unittest.TestCase):
    def test_entries_are_complete_and_matches_name_our_experiments(self):
        values = paper.load()
        self.assertGreater(len(values.values), 100)
        ours = {r["experiment"] for path in (H200, CPU) for r in load(path)["results"]}
        for v in values.values:
            for key in ("id", "metric", "unit", "platform", "where", "quote"):
                self.assertTrue(v.get(key), f"{v.get('id')}: {key}")
            self.assertTrue(v["value"] is not None or v.get("value_range"), v["id"])
            for m in v.get("match", []):
                self.assertIn(m["experiment"], ours, v["id"])


class Report(unittest.TestCase):
    def test_h200_report_has_paper_columns_and_every_finding(self):
        text = render(load(H200))
        self.assertIn("## Summary", text.split("## latency")[0])
        self.assertRegex(text, r"SM clock: \d+")
        self.assertIn("NIC profile fast", text)
        self.assertIn("issue: paper (P-IB) | issue: ours / paper", text)
        self.assertIn("| inline | yes | 8 B from a register", text)
        fidelity_part = text.split("## Fidelity")[1]
        for where, finding, _ in fidelity.FINDINGS:
            self.assertIn(finding, fidelity_part)
            self.assertIn(finding, text.split("## Summary")[1].split("## latency")[0])
        for experiment in {r["experiment"] for r in load(H200)["results"]}:
            self.assertIn(f"## {experiment}\n", text)

    def test_cpu_report_has_paper_columns(self):
        text = render(load(CPU))
        self.assertIn("CPU only (no GPU rows)", text)
        self.assertIn("message rate: paper (P-IB)", text)
        self.assertIn("## Fidelity", text)

    def test_summary_names_the_machine_every_result_records(self):
        doc = load(CPU)
        for r in doc["results"]:
            r["environment"].update({"host": "gpu-node-7", "cpu_model": "AMD EPYC 9654", "cpu_cores": "192",
                                     "gpu": "8 x NVIDIA H200"})
        text = render(doc)
        self.assertIn("- Machine: gpu-node-7: GPU 8 x NVIDIA H200, CPU AMD EPYC 9654 (192 cores)", text)

    def test_failed_experiment_is_listed_and_the_rest_rendered(self):
        doc = load(H200)
        doc["results"] = [r for r in doc["results"] if r["experiment"] != "gpu-ordering"]
        doc["results"].insert(3, {"experiment": "gpu-ordering", "failed": True, "error": "payload check failed: row 3"})
        if jsonschema:
            self.assertTrue(jsonschema.Draft202012Validator(load(SCHEMA)).is_valid(doc))
        text = render(doc)
        self.assertIn("## Failed experiments", text)
        self.assertIn("| gpu-ordering | payload check failed: row 3 |", text)
        self.assertIn("**1 failed** (gpu-ordering)", text)
        for experiment in {r["experiment"] for r in doc["results"] if not r.get("failed")}:
            self.assertIn(f"## {experiment}\n", text)
        self.assertIn("experiment `gpu-ordering` failed: payload check failed: row 3", text)
        self.assertIn("## Checks (same run)", text)

    def test_model_bound_rows_are_never_reproduced(self):
        doc = load(H200)
        verdicts = {f: v for _, f, v in fidelity.evaluate(results.Results(doc), paper.load())}
        reproduced = [(f, v) for f, v in verdicts.items() if v.verdict == fidelity.REPRODUCED and v.rows]
        self.assertTrue(reproduced, "the H200 run reproduces at least one finding")
        finding, verdict = reproduced[0]
        experiments = {r["experiment"] for r in verdict.rows if r}
        for r in doc["results"]:
            if r.get("experiment") in experiments:
                r["bottleneck"] = "softnic engine"
        verdicts = {f: v for _, f, v in fidelity.evaluate(results.Results(doc), paper.load())}
        self.assertEqual(verdicts[finding].verdict, fidelity.NOT_MEASURABLE, finding)

    def test_without_matplotlib_the_report_says_which_plots_were_skipped(self):
        stub = tempfile.mkdtemp()
        os.makedirs(os.path.join(stub, "matplotlib"))
        with open(os.path.join(stub, "matplotlib", "__init__.py"), "w") as f:
            f.write("raise ImportError('matplotlib stubbed out by the test')\n")
        text = render(load(CPU), {"PYTHONPATH": stub})
        self.assertIn("plot for `proxy-load` skipped: matplotlib is not installed", text)
        self.assertIn("## Fidelity", text)


def synthetic(experiment, label, knobs, metrics, bottleneck=None):
    row = {"experiment": experiment, "label": label, "provider": "softnic", "nic_model": "softnic model",
           "engine": "gpu-kernel", "placement": "gpu", "submitter": "gpu-thread", "pe_layout": "1 GPU",
           "knobs": dict(knobs), "environment": {}, "payload_validated": True,
           "metrics": [{"name": n, "unit": u, "p50": v, "spread": 0, "runs": []} for n, u, v in metrics]}
    if bottleneck:
        row["knobs"]["bottleneck"] = bottleneck
    return row


def load_row(path, n, queue, trip, rate, pace="unpaced"):
    return synthetic("gpu-load", f"{path} {n} {queue}", {"path": path, "background CTAs per endpoint": str(n),
                     "probe queue": queue, "pace target Mmsg/s": pace},
                     [("round trip", "us", trip), ("background rate", "Mmsg/s", rate)])


def goodput_row(path, size, gbps, reference="the cx7-ib profile's link rate"):
    return synthetic("gpu-goodput", f"{path} {size}", {"path": path, "payload bytes": str(size),
                     "reference": reference, "reference GB/s": "24.800"}, [("goodput", "GB/s", gbps)])


def verdict_of(rows, finding):
    doc = {"schema": "dissect.results/1", "command": "t", "results": rows}
    return {f: v for _, f, v in fidelity.evaluate(results.Results(doc), paper.load())}[finding]


def connection_row(direction, qps, rate, ceiling, visit=32, model="connection-state model of the softnic, calibrated "
                   "to the paper's Figure 10 (P-H100) in profile 'cx7-ib', not a ConnectX", bottleneck=None):
    return synthetic("gpu-connection-scaling", f"{direction}, {qps} QPs per direction, {visit} writes per visit",
                     {"direction": direction, "transport": "rc", "qps_per_direction": str(qps),
                      "writes_per_visit": str(visit), "nic_profile": "cx7-ib", "model": model},
                     [("message rate", "Mmsg/s", rate), ("model ceiling", "Mmsg/s", ceiling)], bottleneck)


class ConnectionScalingRules(unittest.TestCase):
    """gpu-connection-scaling's rows drive Figure 10's two findings, always as the model's figure."""
    SCALING = next(f for _, f, rule in fidelity.FINDINGS if rule is fidelity.connection_scaling)
    DC = next(f for _, f, rule in fidelity.FINDINGS if rule is fidelity.dc_vs_rc)

    def rows(self, **kw):
        return [connection_row("send", 64, 259, 260, **kw), connection_row("send", 32768, 243, 243, **kw),
                connection_row("both", 64, 160, 162, **kw), connection_row("both", 32768, 79, 80, **kw)]

    def test_the_calibrated_curve_is_the_models_never_reproduced(self):
        v = verdict_of(self.rows(bottleneck="connection-state model (rate within 10 % of its ceiling)"), self.SCALING)
        self.assertEqual(v.verdict, fidelity.NOT_MEASURABLE, v.ours)
        self.assertIn("on the model", v.ours)
        self.assertIn("send-only 243.0 Mmsg/s at 32,768 QPs (paper 242)", v.ours)
        self.assertIn("160.0 → 79.000 Mmsg/s", v.ours)
        self.assertIn("50.625 % lost", v.ours)
        self.assertIn("not what a ConnectX does", v.why)

    def test_without_bottleneck_notes_it_is_still_the_models(self):
        v = verdict_of(self.rows(), self.SCALING)
        self.assertEqual(v.verdict, fidelity.NOT_MEASURABLE)
        self.assertIn("connection-state model", v.why)

    def test_engine_bound_rows_say_the_engine(self):
        rows = self.rows()
        rows[3]["knobs"]["bottleneck"] = "softnic GPU engine: 40 % of the model ceiling"
        v = verdict_of(rows, self.SCALING)
        self.assertEqual(v.verdict, fidelity.NOT_MEASURABLE)
        self.assertIn("softnic engine's", v.why)

    def test_submitter_bound_rows_are_below_the_models_curve(self):
        rows = self.rows(bottleneck="connection-state model (the submitters waited for send-queue room 80 % of "
                                    "their time; the rate is 99 % of the model ceiling)")
        self.assertIn("not what a ConnectX does", verdict_of(rows, self.SCALING).why,
                      "a model-bound note that gives the submitters' waiting share is still the model's")
        rows[1]["knobs"]["bottleneck"] = ("the GPU submitters (the submitters waited for send-queue room 0 % of their "
                                          "time; the rate is 93 % of the model ceiling)")
        v = verdict_of(rows, self.SCALING)
        self.assertEqual(v.verdict, fidelity.NOT_MEASURABLE)
        self.assertIn("the GPU submitters", v.why)
        self.assertIn("its submitters'", v.why)

    def test_fast_has_no_model(self):
        v = verdict_of(self.rows(model="none: profile 'fast' has no connection-state model"), self.SCALING)
        self.assertIn("no connection-state model", v.why)

    def test_missing_rows_and_rc_only(self):
        self.assertIn("no `gpu-connection-scaling` rows", verdict_of([], self.SCALING).why)
        self.assertIn("RC rows only", verdict_of(self.rows(), self.DC).why)

    def figure_10b_row(self, transport, connections, rate, bottleneck):
        return synthetic("gpu-connection-scaling", f"{transport} send, {connections} connections",
                         {"figure": "10b", "direction": "send", "transport": transport, "connections": str(connections),
                          "writes_per_visit": "256", "nic_profile": "cx7-ib"},
                         [("message rate", "Mmsg/s", rate), ("model ceiling", "Mmsg/s", 111.3)], bottleneck)

    def test_figure_10b_retention_beside_the_papers(self):
        model = "connection-state model (the rate is 95 % of its ceiling)"
        rows = self.rows() + [self.figure_10b_row("dc", 64, 100, model), self.figure_10b_row("dc", 2976, 90, model),
                              self.figure_10b_row("rc", 64, 200, model), self.figure_10b_row("rc", 2976, 100, model)]
        v = verdict_of(rows, self.DC)
        self.assertEqual(v.verdict, fidelity.NOT_MEASURABLE)
        self.assertIn("DC keeps 90.000 % of its 64-connection rate at 2,976", v.ours)
        self.assertIn("RC keeps 50.000 % of its 64-connection rate at 2,976", v.ours)
        self.assertIn("0.23 at 2,976", v.ours)
        rows[-3]["knobs"]["bottleneck"] = ("softnic's DC batches, one modelled wait each in the engine warp "
                                           "(a model artefact, not a NIC's)")
        self.assertIn("DC batches, one modelled wait each", verdict_of(rows, self.DC).why)


class GpuProducerRules(unittest.TestCase):
    """gpu-load and gpu-goodput rows drive Figure 6's and Figure 8's findings when present."""
    ISOLATION = next(f for _, f, rule in fidelity.FINDINGS if rule is fidelity.queue_isolation)
    GOODPUT = next(f for _, f, rule in fidelity.FINDINGS if rule is fidelity.goodput_90)

    def load_rows(self, reserved_trip):
        rows = []
        for path in ("mini-gda", "mini-proxy"):
            rows += [load_row(path, 0, "shared", 5, 0), load_row(path, 64, "shared", 2000, 40),
                     load_row(path, 64, "reserved", reserved_trip, 45)]
        return rows + [load_row("mini-proxy", 64, "reserved", 30, 30, pace="30.0")]

    def test_reserved_queue_recovering_an_order_of_magnitude_is_reproduced(self):
        v = verdict_of(self.load_rows(100), self.ISOLATION)
        self.assertEqual(v.verdict, fidelity.REPRODUCED, v.ours)
        self.assertIn("mini-gda (fast), 64 CTAs/endpoint: shared", v.ours)
        self.assertIn("paced 30.0 Mmsg/s, mini-proxy reserved", v.ours)

    def test_reserved_queue_recovering_less_differs(self):
        self.assertEqual(verdict_of(self.load_rows(500), self.ISOLATION).verdict, fidelity.DIFFERS)

    def proxy_depth_rows(self, depth, reserved_trip, bottleneck):
        rows = [load_row("mini-proxy", n, q, t, 30) for n, q, t in ((0, "shared", 5), (64, "shared", 2000),
                                                                    (64, "reserved", reserved_trip))]
        for r in rows:
            r["knobs"]["worker sq_wqebbs"] = str(depth)
            r["knobs"]["nic_profile"] = "cx7-ib"  # where gpu-load writes it (bench/gpu/load.cu)
            if r["knobs"]["background CTAs per endpoint"] == "64":
                r["knobs"]["bottleneck"] = bottleneck
        return rows

    def test_an_isolation_the_model_bounded_counts_only_beside_one_it_did_not(self):
        gda = [r for r in self.load_rows(100) if r["knobs"]["path"] == "mini-gda"]
        engine = self.proxy_depth_rows(256, 100, "NIC model: the softnic host engine (rate >= 80 % of its ceiling)")
        v = verdict_of(gda + engine, self.ISOLATION)
        self.assertEqual(v.verdict, fidelity.NOT_MEASURABLE, v.ours)  # its rows are the model's
        self.assertIn("mini-proxy (cx7-ib, worker send queues of 256 WQEBBs)", v.ours)
        self.assertIn("† (the model bounded the background: does not count)", v.ours)
        latency = self.proxy_depth_rows(32, 50, "the cx7-ib profile's completion latency over the workers' send queues")
        v = verdict_of(gda + engine + latency, self.ISOLATION)
        self.assertEqual(v.verdict, fidelity.REPRODUCED, v.ours)
        self.assertIn("mini-proxy (cx7-ib, worker send queues of 32 WQEBBs), 64 CTAs/endpoint: shared 2,000", v.ours)

    def goodput_rows(self, gda_first, reference="the cx7-ib profile's link rate"):
        rows = []
        for path, first in (("mini-gda", gda_first), ("mini-proxy", 2048)):
            rows += [goodput_row(path, s, 24 if s >= first else 5, reference) for s in (8, 512, 2048, 7168, 32768)]
        return rows

    def test_goodput_order_against_the_link(self):
        v = verdict_of(self.goodput_rows(512), self.GOODPUT)
        self.assertEqual(v.verdict, fidelity.REPRODUCED, v.ours)
        self.assertIn("mini-gda 512 B (paper 512 B)", v.ours)
        self.assertEqual(verdict_of(self.goodput_rows(7168), self.GOODPUT).verdict, fidelity.DIFFERS)

    def test_goodput_star_bounded_by_the_model_is_not_measurable(self):
        rows = self.goodput_rows(512)
        star = next(r for r in rows if r["knobs"]["path"] == "mini-gda" and r["knobs"]["payload bytes"] == "512")
        star["knobs"]["bottleneck"] = "NIC model (rate >= 80 % of its ceiling)"
        self.assertEqual(verdict_of(rows, self.GOODPUT).verdict, fidelity.NOT_MEASURABLE)

    def test_goodput_against_the_model_itself_is_not_measurable(self):
        v = verdict_of(self.goodput_rows(512, "the softnic GPU engine's own payload rate"), self.GOODPUT)
        self.assertEqual(v.verdict, fidelity.NOT_MEASURABLE)

    COOPERATIVE = next(f for _, f, rule in fidelity.FINDINGS if rule is fidelity.cooperative_publication)

    @staticmethod
    def table5_row(label, rate, posting, held, bottleneck):
        own = "the submitters' own pace: each QP's send queue held the run, so none waited for room"
        knobs = {"posting_rate": own if held else "to the last post, waits for room included"}
        return synthetic("gpu-rate", label, knobs, [("message rate", "Mmsg/s", rate), ("posting rate", "Mmsg/s", posting)],
                         bottleneck)

    def cooperative_rows(self, held, warp_posting=30.0):
        submitter = "submitter (the last completion followed the last post within 1 % of the run)"
        return [self.table5_row("one thread, 1 QP, batch 1", 1.3, 1.3, held, submitter),
                self.table5_row("256 threads, 1 QP, slots handed off per thread (∗)", 2.0, 2.0, held, submitter),
                self.table5_row("32 threads, 1 QP, cooperative (‡)", 19.0, warp_posting, held,
                                "NIC model (its backlog reached 4032 of 4096 WQEBBs)")]

    def test_a_warp_held_back_by_the_model_is_read_from_its_posting_rate_when_its_queue_held_the_run(self):
        v = verdict_of(self.cooperative_rows(held=True), self.COOPERATIVE)
        self.assertEqual(v.verdict, fidelity.REPRODUCED, v.ours)
        self.assertIn("23.1× one thread", v.ours)
        self.assertIn("the model carried 19.000", v.ours)
        self.assertEqual(verdict_of(self.cooperative_rows(held=True, warp_posting=12.0), self.COOPERATIVE).verdict,
                         fidelity.DIFFERS)

    def test_the_sweeps_held_repeats_are_read_before_its_plain_rows(self):
        plain = self.cooperative_rows(held=False)
        repeats = self.cooperative_rows(held=True, warp_posting=26.0)
        for row in repeats:
            row["label"] += fidelity.HOLDING
        v = verdict_of(plain + repeats, self.COOPERATIVE)
        self.assertEqual(v.verdict, fidelity.REPRODUCED, v.ours)
        self.assertIn("20.0× one thread", v.ours)
        v = verdict_of(plain + repeats[:2], self.COOPERATIVE)  # a repeat missing: the plain rows
        self.assertEqual(v.verdict, fidelity.NOT_MEASURABLE, v.ours)

    def test_a_warp_held_back_by_the_model_without_a_held_run_is_not_measurable(self):
        v = verdict_of(self.cooperative_rows(held=False), self.COOPERATIVE)
        self.assertEqual(v.verdict, fidelity.NOT_MEASURABLE, v.ours)
        self.assertIn("14.6× one thread", v.ours)

    CHAINING = next(f for _, f, rule in fidelity.FINDINGS if rule is fidelity.proxy_chaining)
    WORKERS = next(f for _, f, rule in fidelity.FINDINGS if rule is fidelity.proxy_workers)

    @staticmethod
    def rate_row(experiment, workers, batch, rate, bottleneck="GPU producers (chains of 3.0)"):
        row = synthetic(experiment, f"T={workers} B={batch}", {"workers (T)": str(workers), "batch (B)": str(batch),
                        "rings (R)": "32"}, [("message rate", "Mmsg/s", rate)], bottleneck)
        row["environment"] = {"usable_cores": "16", "worker0.scaling_governor": "performance"}
        return row

    def test_figure7_reads_gpu_producers_before_host_producers(self):
        rows = [self.rate_row("proxy-rate", 1, 1, 1.0), self.rate_row("proxy-rate", 1, 16, 1.1),
                self.rate_row("gpu-proxy-rate", 1, 1, 2.0), self.rate_row("gpu-proxy-rate", 1, 16, 11.0)]
        v = verdict_of(rows, self.CHAINING)
        self.assertEqual(v.verdict, fidelity.REPRODUCED, v.ours)
        self.assertIn("GPU producers", v.ours)
        self.assertIn("5.50×", v.ours)

    def test_figure7_chaining_bound_by_the_model_is_not_measurable(self):
        rows = [self.rate_row("gpu-proxy-rate", 1, 1, 2.0),
                self.rate_row("gpu-proxy-rate", 1, 16, 11.0, "NIC model: the softnic host engine (rate >= 80 %)")]
        self.assertEqual(verdict_of(rows, self.CHAINING).verdict, fidelity.NOT_MEASURABLE)

    def held_rate_row(self, batch, rate, posting, kept_up=None):
        kept_up = batch == 1 if kept_up is None else kept_up
        bound = ("submitter (the send queue held the run, so no submitter waited for room; at most 256 WQEBBs "
                 "waited on any QP)" if kept_up else "NIC model (the send queue held the run, so no submitter "
                 "waited for room; it fell 20000 WQEBBs behind on the fullest QP)")
        row = self.rate_row("gpu-proxy-rate", 1, batch, rate, bound)
        row["label"] += fidelity.HOLDING
        row["knobs"]["posting_rate"] = "the workers' own pace: each worker's send queue held its share of the run"
        row["metrics"].append({"name": "posting rate", "unit": "Mmsg/s", "p50": posting, "spread": 0, "runs": []})
        return row

    def test_figure7_chaining_read_from_the_workers_posting_rates_where_their_queues_held_the_run(self):
        rows = [self.rate_row("gpu-proxy-rate", 1, 1, 5.0),
                self.rate_row("gpu-proxy-rate", 1, 16, 13.0, "NIC model: the softnic host engine (send queue full)"),
                self.held_rate_row(1, 4.9, 5.0), self.held_rate_row(16, 12.0, 27.5)]
        v = verdict_of(rows, self.CHAINING)
        self.assertEqual(v.verdict, fidelity.REPRODUCED, v.ours)
        self.assertIn("5.50×", v.ours)
        self.assertIn("the host engine carried 12.000 at B = 16", v.ours)
        self.assertEqual(verdict_of(rows[:2], self.CHAINING).verdict, fidelity.NOT_MEASURABLE)
        # A B = 1 pace taken where the engine fell behind (fewer chains retired): the grid's rows.
        rows[2] = self.held_rate_row(1, 4.9, 9.0, kept_up=False)
        self.assertEqual(verdict_of(rows, self.CHAINING).verdict, fidelity.NOT_MEASURABLE)

    def test_figure7_workers_leave_the_held_repeats_out_of_the_series(self):
        rows = [self.rate_row("gpu-proxy-rate", t, b, t * (5.0 if b == 16 else 1.0)) for t in (1, 8) for b in (1, 16)]
        rows += [self.held_rate_row(1, 0.5, 1.0), self.held_rate_row(16, 0.5, 9.0)]
        v = verdict_of(rows, self.WORKERS)
        self.assertIn("T = 1→8 8.0×", v.ours)

    def test_figure7_workers_name_the_top_point_beside_the_paper(self):
        rows = [self.rate_row("gpu-proxy-rate", t, b, t * (5.0 if b == 16 else 1.0)) for t in (1, 8) for b in (1, 16)]
        rows.append(self.rate_row("gpu-proxy-rate", 1, 4, 3.0))  # a batch-sweep point alone: not a series
        v = verdict_of(rows, self.WORKERS)
        self.assertEqual(v.verdict, fidelity.REPRODUCED, v.ours)
        self.assertIn("T = 8, B = 16: 40.000 Mmsg/s on 16 host cores", v.ours)
        self.assertNotIn("B = 4:", v.ours)


if __name__ == "__main__":
    if PART == "schema" and jsonschema is None:
        print("python3-jsonschema is not installed (scripts/bootstrap.sh installs it): skipped", file=sys.stderr)
        sys.exit(77)
    classes = [Schema] if PART == "schema" else [PaperValues, Report, GpuProducerRules, ConnectionScalingRules]
    suite = unittest.TestSuite(unittest.defaultTestLoader.loadTestsFromTestCase(c) for c in classes)
    sys.exit(0 if unittest.TextTestRunner(verbosity=1).run(suite).wasSuccessful() else 1)
