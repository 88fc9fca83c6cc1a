"""Every figure of the report, drawn as the paper draws its counterpart.

Numeric axes where the knob is numeric (log where the paper uses log), one series per
configuration, one unit per axis, spreads as the runs' p50 range (never outside the metric's
domain), and the paper's stated points overlaid as hollow markers. Without matplotlib each
function records the skipped plot in `notes` and returns None.
"""
import os

from . import results as res
from .paper import PRIMARY
from .tables import goodput_points, size_text

PAPER_STYLE = dict(marker="*", s=90, facecolors="none", edgecolors="black", linewidths=1.0, zorder=5)
SOFTNIC_FOOTER = "measured on the softnic: a software NIC model, not a ConnectX"


def _pyplot(notes, what):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        notes.append(f"plot for `{what}` skipped: matplotlib is not installed")
        return None


def _finish(plt, fig, rows, out_dir, name, title):
    fig.suptitle(title, fontsize=9)
    first = rows[0]
    footer = SOFTNIC_FOOTER if res.is_softnic(first) else first.get("nic_model", "")
    fig.text(0.01, 0.005, f"{footer}; provider {first['provider']}, engine {first['engine']}, "
             f"placement {first['placement']}", fontsize=6)
    fig.tight_layout(rect=(0, 0.03, 1, 0.95))
    fig.savefig(os.path.join(out_dir, name), dpi=120)
    plt.close(fig)
    return name


def _errors(ms):
    low, high = [], []
    for m in ms:
        lo, hi = res.run_range(m)
        low.append(max(0.0, m["p50"] - lo))
        high.append(max(0.0, hi - m["p50"]))
    return [low, high]


def _series(ax, xs, ms, label, **style):
    ax.errorbar(xs, [m["p50"] for m in ms], yerr=_errors(ms), label=label, capsize=2, **style)


def _knob(row, name):
    return res.number(row["knobs"].get(name))


# --- Figure 6 -----------------------------------------------------------------------------

def proxy_load(rows, paper, out_dir, notes):
    plt = _pyplot(notes, "proxy-load")
    if plt is None:
        return None
    knob = "background producers per endpoint"
    fig, (rtt_ax, rate_ax) = plt.subplots(1, 2, figsize=(9, 3.8), gridspec_kw={"width_ratios": [3, 2]})
    for ring, style in (("shared", "--"), ("private", "-")):
        series = sorted((r for r in rows if r["knobs"].get("probe ring") == ring), key=lambda r: _knob(r, knob) or 0)
        if not series:
            continue
        xs = [_knob(r, knob) for r in series]
        label = "shared ring (probe with bulk)" if ring == "shared" else "private ring (reserved probe queue)"
        _series(rtt_ax, xs, [res.metric(r, "round trip") for r in series], label, linestyle=style, marker="o")
        _series(rate_ax, xs, [res.metric(r, "background rate") for r in series], label, linestyle=style, marker="o")
    for id, ax, text in (("T11:mini-proxy:shared:round trip:P-IB", rtt_ax, "shared"),
                         ("T11:mini-proxy:reserved:round trip:P-IB", rtt_ax, "reserved"),
                         ("T11:mini-proxy:shared:background rate:P-IB", rate_ax, "shared"),
                         ("T11:mini-proxy:private:background rate:P-IB", rate_ax, "private")):
        if id in paper.by_id:
            ax.scatter([64], [paper.value(id)], **PAPER_STYLE)
            below = text in ("reserved", "private")
            ax.annotate(f"paper {text}", (64, paper.value(id)), fontsize=6, xytext=(-44, -10 if below else 5),
                        textcoords="offset points")
    rtt_ax.scatter([], [], label=f"paper ({PRIMARY}, Table 11, 64 CTAs)", **PAPER_STYLE)
    for ax in (rtt_ax, rate_ax):
        ax.set_xscale("symlog", linthresh=1)
        ax.set_xticks([0, 1, 4, 16, 64])
        ax.set_xticklabels(["0", "1", "4", "16", "64"])
        ax.set_xlabel("background producers per endpoint\n(paper: background CTAs)", fontsize=8)
    rtt_ax.set_yscale("log")
    rtt_ax.set_ylabel("probe round trip p50 (µs)")
    rate_ax.set_ylabel("background rate (Mmsg/s)")
    rate_ax.set_ylim(bottom=0)
    rtt_ax.legend(fontsize=6)
    return _finish(plt, fig, rows, out_dir, "proxy-load.png", "proxy-load — RTT under load (cf. Figure 6a)")


def gpu_load(rows, paper, out_dir, notes):
    """Figure 6 with GPU producers: one curve per path and probe queue (unpaced rows)."""
    plt = _pyplot(notes, "gpu-load")
    if plt is None:
        return None
    knob = "background CTAs per endpoint"
    fig, (rtt_ax, rate_ax) = plt.subplots(1, 2, figsize=(9, 3.8), gridspec_kw={"width_ratios": [3, 2]})
    unpaced = [r for r in rows if r["knobs"].get("pace target Mmsg/s") == "unpaced"]
    for path in sorted({r["knobs"].get("path") for r in unpaced}):
        for queue, style in (("shared", "--"), ("reserved", "-")):
            series = sorted((r for r in unpaced if r["knobs"].get("path") == path and r["knobs"].get("probe queue") == queue),
                            key=lambda r: _knob(r, knob) or 0)
            if not series:
                continue
            xs = [_knob(r, knob) for r in series]
            label = f"{path}, {queue} probe queue"
            _series(rtt_ax, xs, [res.metric(r, "round trip") for r in series], label, linestyle=style, marker="o")
            _series(rate_ax, xs, [res.metric(r, "background rate") for r in series], label, linestyle=style, marker="o")
    for ax in (rtt_ax, rate_ax):
        ax.set_xscale("symlog", linthresh=1)
        ax.set_xticks([0, 1, 4, 16, 64])
        ax.set_xticklabels(["0", "1", "4", "16", "64"])
        ax.set_xlabel("background CTAs per endpoint", fontsize=8)
    rtt_ax.set_yscale("log")
    rtt_ax.set_ylabel("probe round trip p50 (µs)")
    rate_ax.set_ylabel("background rate carried (Mmsg/s)")
    rate_ax.set_ylim(bottom=0)
    rtt_ax.legend(fontsize=6)
    return _finish(plt, fig, rows, out_dir, "gpu-load.png", "gpu-load — RTT under load, GPU producers (cf. Figure 6)")


# --- Figure 7 -----------------------------------------------------------------------------

def proxy_rate(rows, paper, out_dir, notes):
    name = rows[0]["experiment"] if rows else "proxy-rate"  # proxy-rate (host producers) or gpu-proxy-rate
    plt = _pyplot(notes, name)
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(7, 3.8))
    batches = sorted({r["knobs"].get("batch (B)") for r in rows}, key=lambda b: res.number(b) or 0)
    for batch in batches:
        series = sorted((r for r in rows if r["knobs"].get("batch (B)") == batch), key=lambda r: _knob(r, "workers (T)"))
        xs = [_knob(r, "workers (T)") for r in series]
        _series(ax, xs, [res.metric(r, "message rate") for r in series], f"mini-proxy, batch {batch}", marker="o")
        bound = [(x, res.p50(r, "message rate")) for x, r in zip(xs, series) if res.model_bound(r)]
        if bound:
            ax.scatter(*zip(*bound), marker="x", color="red", zorder=4)
    ax.scatter([], [], marker="x", color="red", label="softnic engine saturated (model-bound)")
    for id, x, text in (("T10:mini-proxy, B = 1:message rate:cold:P-IB", 1, "paper B = 1"),
                        ("T10:mini-proxy, B = 16:message rate:cold:P-IB", 1, "paper B = 16"),
                        ("F7:GB200 8 workers:P-GB200", 8, "paper B = 16, P-GB200")):
        if id in paper.by_id:
            ax.scatter([x], [paper.value(id)], **PAPER_STYLE)
            ax.annotate(text, (x, paper.value(id)), fontsize=6, xytext=(5, 3), textcoords="offset points")
    ax.scatter([], [], label=f"paper (Table 10 cold, {PRIMARY}; §4.2)", **PAPER_STYLE)
    if "F7:IBGDA ref:P-IB" in paper.by_id:
        ax.axhline(paper.value("F7:IBGDA ref:P-IB"), linestyle=":", color="gray", label="NVSHMEM IBGDA, paper P-IB")
    ax.set_yscale("log")
    ax.set_xlabel("CPU workers (T)")
    ax.set_ylabel("8 B message rate (Mmsg/s)")
    ax.legend(fontsize=6)
    producers = "GPU producers" if name.startswith("gpu-") else "host producers"
    return _finish(plt, fig, rows, out_dir, f"{name}.png", f"{name} — rate against workers, {producers} (cf. Figure 7)")


# --- Figure 8 -----------------------------------------------------------------------------

def goodput(rows, paper, out_dir, notes):
    plt = _pyplot(notes, "goodput")
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(7, 3.8))
    points = goodput_points(rows)
    for path, point in points.items():
        series = point["rows"]
        xs = [_knob(r, "payload bytes") for r in series]
        _series(ax, xs, [res.metric(r, "goodput") for r in series], path, marker="o", markersize=3)
        if point["first"]:
            y = res.p50(next(r for r in series if _knob(r, "payload bytes") == point["first"]), "goodput")
            ax.scatter([point["first"]], [y], marker="*", s=140, zorder=6)
        entry = paper.counterpart(rows, series[0], "first size at 90%")
        reference = paper.by_id.get("F8:reference:P-IB")
        if entry and reference:
            ax.scatter([entry["value"]], [0.9 * reference["value"]], **PAPER_STYLE)
    reference = next((p["reference"] for p in points.values() if p["reference"]), None)
    if reference:
        # goodput: the model's own bandwidth; gpu-goodput: the profile's link where it has one.
        what = rows[0]["knobs"].get("reference", "model, no link")
        ax.axhline(reference, linestyle="--", color="gray", label=f"our reference {reference:.1f} GB/s ({what})")
    if "F8:reference:P-IB" in paper.by_id:
        ax.axhline(paper.value("F8:reference:P-IB"), linestyle=":", color="black", label="paper link reference 24.8 GB/s")
    ax.axvline(7168, color="lightgray", linewidth=0.8)
    ax.scatter([], [], marker="*", s=80, color="gray", label="ours: first size at 90 % of our reference")
    ax.scatter([], [], label="paper (P-IB): first size at 90 %", **PAPER_STYLE)
    ax.set_xscale("log", base=2)
    ticks = [8, 64, 512, 2048, 7168, 32768, 1 << 20]
    ax.set_xticks(ticks)
    ax.set_xticklabels([size_text(t).replace(" ", "") for t in ticks], fontsize=7)
    ax.set_xlabel("message size; vertical line: a DeepSeek-V3 FP8 token (7,168 B)")
    ax.set_ylabel("goodput (GB/s)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=6)
    experiment = rows[0]["experiment"]
    return _finish(plt, fig, rows, out_dir, f"{experiment}.png", f"{experiment} against payload size (cf. Figure 8)")


# --- Figure 3a ----------------------------------------------------------------------------

def inline_sweep(rows, paper, out_dir, notes):
    plt = _pyplot(notes, "gpu-inline-sweep")
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(7, 3.8))
    series = sorted(rows, key=lambda r: _knob(r, "payload_bytes") or 0)
    xs = [_knob(r, "payload_bytes") for r in series]
    for name in ("issue", "put+completion"):
        ms = [res.metric(r, name) for r in series]
        if all(ms):
            _series(ax, xs, ms, name, marker="o", markersize=3)
    for id in ("T3:mini-gda, inline:issue:P-IB", "T3:mini-gda, inline:put+completion:P-IB"):
        if id in paper.by_id:
            ax.scatter([8], [paper.value(id)], **PAPER_STYLE)
    ax.scatter([], [], label="paper P-IB, 8 B (Table 3)", **PAPER_STYLE)
    ax.set_xlabel("inline payload (B)")
    ax.set_ylabel("latency (µs)")
    ax.set_xticks([8, 32, 92, 220])
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7)
    return _finish(plt, fig, rows, out_dir, "gpu-inline-sweep.png", "gpu-inline-sweep — inline payload (cf. Figure 3a)")


# --- every other experiment: bars per row, one panel per unit ----------------------------

def bars(experiment, rows, paper, out_dir, notes):
    plt = _pyplot(notes, experiment)
    if plt is None:
        return None
    units = []
    for r in rows:
        for m in r["metrics"]:
            if m["unit"] not in units:
                units.append(m["unit"])
    fig, axes = plt.subplots(1, len(units), figsize=(7 * len(units) ** 0.5, 3.8), squeeze=False)
    labels = [r["label"] for r in rows]
    for ax, unit in zip(axes[0], units):
        names = list(dict.fromkeys(m["name"] for r in rows for m in r["metrics"] if m["unit"] == unit))
        width = 0.8 / len(names)
        for i, name in enumerate(names):
            xs = [j + i * width for j in range(len(rows))]
            ms = [res.metric(r, name) for r in rows]
            present = [(x, m) for x, m in zip(xs, ms) if m]
            ax.bar([x for x, _ in present], [m["p50"] for _, m in present], width,
                   yerr=_errors([m for _, m in present]), capsize=2, label=name)
            marks = [(x, paper.counterpart(rows, r, name)) for x, r in zip(xs, rows)]
            marks = [(x, e["value"]) for x, e in marks if e and e["value"] is not None]
            if marks:
                ax.scatter(*zip(*marks), **PAPER_STYLE)
        if any(paper.counterpart(rows, r, m["name"]) for r in rows for m in r["metrics"]):
            ax.scatter([], [], label=f"paper ({PRIMARY})", **PAPER_STYLE)
        ax.set_xticks([j + width * (len(names) - 1) / 2 for j in range(len(rows))])
        ax.set_xticklabels(labels, rotation=20, ha="right", fontsize=7)
        ax.set_ylabel(f"p50 over runs ({unit})")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=6)
    return _finish(plt, fig, rows, out_dir, f"{experiment}.png", experiment)


SPECIAL = {"proxy-load": proxy_load, "proxy-rate": proxy_rate, "gpu-proxy-rate": proxy_rate, "goodput": goodput, "gpu-goodput": goodput,
           "gpu-load": gpu_load, "gpu-inline-sweep": inline_sweep}


def plot(experiment, rows, paper, out_dir, notes):
    try:
        if experiment in SPECIAL:
            return SPECIAL[experiment](rows, paper, out_dir, notes)
        return bars(experiment, rows, paper, out_dir, notes)
    except Exception as e:  # a plot must never cost the report its tables
        notes.append(f"plot for `{experiment}` failed: {type(e).__name__}: {e}")
        return None


def telemetry_histogram(series, out_dir, notes):
    plt = _pyplot(notes, "telemetry histogram")
    if plt is None or not series:
        return None
    fig, ax = plt.subplots(figsize=(7, 3.6))
    shown = series[:8]
    width = 0.8 / len(shown)
    for i, (name, hist, _) in enumerate(shown):
        ax.bar([j + i * width for j in range(len(hist))], hist, width, label=name)
    ax.set_xticks(range(len(shown[0][2])))
    ax.set_xticklabels([f"<{e} ns" for e in shown[0][2]], fontsize=7, rotation=20)
    ax.set_ylabel("completions")
    ax.set_title("per-QP completion latency (post -> CQE), softnic", fontsize=9)
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "telemetry_latency.png"), dpi=120)
    plt.close(fig)
    return "telemetry_latency.png"
