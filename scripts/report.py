#!/usr/bin/env python3
"""Turns dissect's results.json into report.md with tables and PNG plots.

usage: report.py RESULTS_JSON OUTPUT_DIR [TELEMETRY_JSON]

With TELEMETRY_JSON (the file DISSECT_TELEMETRY_ENABLE=1 writes), the report adds a telemetry
summary: per-QP counters and a per-QP completion-latency histogram plot.

Every table and figure names the provider, engine, queue placement, PE layout and the NIC model;
results measured on the softnic say so. Plots need matplotlib; without it the report says which
plots were skipped.
"""
import json
import os
import sys
from collections import OrderedDict


def load(path):
    with open(path) as f:
        return json.load(f)


def context_line(result):
    env = result.get("environment", {})
    parts = [
        f"provider **{result['provider']}** ({result['nic_model']})",
        f"engine {result['engine']}",
        f"queue placement {result['placement']}",
        f"submitter {result['submitter']}",
        f"PE layout: {result['pe_layout']}",
    ]
    if "sm_clock_mhz" in env:
        parts.append(f"SM clock {env['sm_clock_mhz']} MHz")
    if "cpu_clock" in env:
        parts.append(f"CPU clock {env['cpu_clock']}")
    return "; ".join(parts)


def metric_names(results):
    names = OrderedDict()
    for r in results:
        for m in r["metrics"]:
            names[(m["name"], m["unit"])] = True
    return list(names)


def split_knobs(results):
    """Knobs equal in every row (for the header line) and knobs that vary (one column each)."""
    keys = list(OrderedDict((k, True) for r in results for k in r["knobs"]))
    constant = OrderedDict()
    varying = []
    for k in keys:
        values = {r["knobs"].get(k) for r in results}
        if len(values) == 1:
            constant[k] = values.pop()
        else:
            varying.append(k)
    return constant, varying


def table(results):
    names = metric_names(results)
    _, varying = split_knobs(results)
    # What saturated and how busy the workers were: the issue asks the report to name it per row.
    summary_keys = [k for k in ("saturated", "mean chain (descriptors per post)", "worker busy fraction")
                    if any(k in r.get("environment", {}) for r in results)]
    varying = varying + [f"env:{k}" for k in summary_keys]
    head = ("| case | " + "".join(f"{k.replace('env:', '')} | " for k in varying) +
            " | ".join(f"{n} ({u}) p50 ± spread" for n, u in names) + " | payload |")
    rule = "|" + "---|" * (len(names) + len(varying) + 2)
    rows = [head, rule]
    for r in results:
        by_name = {(m["name"], m["unit"]): m for m in r["metrics"]}
        cells = []
        for key in names:
            m = by_name.get(key)
            cells.append("—" if m is None else f"{m['p50']:.3f} ± {m['spread']:.3f}")
        ok = "validated" if r["payload_validated"] else "**NOT validated**"
        knob_cells = "".join(
            f"{r['environment'].get(k[4:], '—') if k.startswith('env:') else r['knobs'].get(k, '—')} | "
            for k in varying)
        rows.append(f"| {r['label']} | " + knob_cells + " | ".join(cells) + f" | {ok} |")
    return "\n".join(rows)


def plot(experiment, results, out_dir, notes):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        notes.append(f"plot for `{experiment}` skipped: matplotlib is not installed")
        return None
    names = metric_names(results)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    labels = [r["label"] for r in results]
    width = 0.8 / max(1, len(names))
    for i, key in enumerate(names):
        values, errors = [], []
        for r in results:
            m = {(x["name"], x["unit"]): x for x in r["metrics"]}.get(key)
            values.append(m["p50"] if m else 0)
            errors.append(m["spread"] / 2 if m else 0)
        xs = [j + i * width for j in range(len(results))]
        ax.bar(xs, values, width, yerr=errors, label=f"{key[0]} ({key[1]})")
    ax.set_xticks([j + width * (len(names) - 1) / 2 for j in range(len(results))])
    ax.set_xticklabels(labels, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("p50 over runs")
    first = results[0]
    ax.set_title(f"{experiment} — {first['provider']} ({first['engine']}, {first['placement']})",
                 fontsize=9)
    ax.legend(fontsize=7)
    fig.text(0.01, 0.01, "softnic: software NIC model, not a ConnectX" if first["provider"] == "softnic"
             else first["nic_model"], fontsize=6)
    fig.tight_layout()
    name = f"{experiment}.png"
    fig.savefig(os.path.join(out_dir, name), dpi=120)
    plt.close(fig)
    return name


def telemetry_section(path, out_dir, notes):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        notes.append(f"telemetry summary skipped: cannot read {path}: {e}")
        return []
    lines = ["## Telemetry", "", f"File: `{path}`; latency histogram buckets of "
             f"{data['histogram_interval_ns']} ns; 1-in-{data.get('latency_sample_interval', 1)} sampling.", "",
             "| device | channel | QP | WQEs sent | completed | doorbells | tx bytes | CQ errors | "
             "completion ns min / max |", "|---|---|---|---|---|---|---|---|---|"]
    series = []
    for device in data["devices"]:
        for channel in device["channels"]:
            for qp in channel["queue_pairs"]:
                lines.append(f"| {device['roce_device']} | {channel['id']} | {qp['id']:#x} | "
                             f"{qp['num_wqe_sent']} | {qp['num_wqe_completed']} | {qp['num_doorbells']} | "
                             f"{qp['tx_bytes']} | {qp['num_cq_errors']} | "
                             f"{qp['wqe_completion_ns_min']} / {qp['wqe_completion_ns_max']} |")
                hist = [b["num_wqe"] for b in qp["wqe_completion_histogram"]]
                if sum(hist):
                    series.append((f"{device['roce_device']} QP {qp['id']:#x}", hist,
                                   [b["latency_ns"] for b in qp["wqe_completion_histogram"]]))
    lines.append("")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        notes.append("telemetry histogram plot skipped: matplotlib is not installed")
        return lines
    if series:
        fig, ax = plt.subplots(figsize=(7, 3.6))
        shown = series[:8]
        width = 0.8 / len(shown)
        for i, (name, hist, edges) in enumerate(shown):
            ax.bar([j + i * width for j in range(len(hist))], hist, width, label=name)
        ax.set_xticks(range(len(shown[0][2])))
        ax.set_xticklabels([f"<{e} ns" for e in shown[0][2]], fontsize=7, rotation=20)
        ax.set_ylabel("completions")
        ax.set_title("per-QP completion latency (post -> CQE), softnic" , fontsize=9)
        ax.legend(fontsize=6)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "telemetry_latency.png"), dpi=120)
        plt.close(fig)
        lines += ["![telemetry latency](telemetry_latency.png)", ""]
    return lines


def p50(results, experiment, label, metric):
    for r in results:
        if r["experiment"] == experiment and r["label"] == label:
            for m in r["metrics"]:
                if m["name"] == metric:
                    return m["p50"]
    return None


def checks_section(results):
    """The ratios the paper's claims rest on, each from two rows of this same run."""
    rows = []

    def ratio(what, numerator, denominator, bound, reading):
        if numerator is None or denominator is None or denominator <= 0:
            return
        value = numerator / denominator
        verdict = "yes" if value <= bound else "no"
        rows.append(f"| {what} | {numerator:.3f} / {denominator:.3f} = {value:.2f} | "
                    f"{reading} {bound:g} | {verdict} |")

    floor = p50(results, "gpu-mechanism-floor", "gpu-fence", "floor")
    for label in ("pointer", "inline"):
        ratio(f"mini-gda issue ({label}, GPU-scope fence) / mechanism floor",
              p50(results, "gpu-latency", label, "issue"), floor, 1.5, "at most")
    ratio("tuned proxy enqueue / one posted 16 B store",
          p50(results, "gpu-proxy-latency", "tuned", "issue"),
          p50(results, "gpu-proxy-latency", "16B posted store (reference)", "issue"), 2.0, "at most")
    off = p50(results, "gpu-telemetry-rate", "off", "ns per message")
    on = p50(results, "gpu-telemetry-rate", "N=16", "ns per message")
    ratio("GPU-path time per message, telemetry N = 16 / off", on, off, 1.05, "at most")
    if not rows:
        return []
    return ["## Checks (same run)", "",
            "| check | value | asked | met |", "|---|---|---|---|"] + rows + [""]


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    data = load(sys.argv[1])
    out_dir = sys.argv[2]
    groups = OrderedDict()
    for r in data["results"]:
        groups.setdefault(r["experiment"], []).append(r)
    notes = []
    lines = ["# dissect report", "",
             f"Command: `{data['command']}`", ""]
    if any(r["provider"] == "softnic" for r in data["results"]):
        lines += ["> Numbers measured on the **softnic**: they measure the submitter side of the "
                  "mechanism plus a software NIC model, not a ConnectX.", ""]
    for experiment, results in groups.items():
        lines += [f"## {experiment}", "", context_line(results[0]), "",
                  "Knobs (all rows): " + ", ".join(f"{k}={v}" for k, v in split_knobs(results)[0].items()), "",
                  table(results), ""]
        env = results[0].get("environment", {})
        if env:
            lines += ["Environment (first row): " + ", ".join(f"{k}={v}" for k, v in env.items()), ""]
        image = plot(experiment, results, out_dir, notes)
        if image:
            lines += [f"![{experiment}]({image})", ""]
    lines += checks_section(data["results"])
    if len(sys.argv) == 4:
        lines += telemetry_section(sys.argv[3], out_dir, notes)
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
