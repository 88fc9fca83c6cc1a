"""The telemetry summary: per-QP counters and the completion-latency histogram."""
import json

from . import plots


def section(path, out_dir, notes):
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
    image = plots.telemetry_histogram(series, out_dir, notes)
    if image:
        lines += [f"![telemetry latency]({image})", ""]
    return lines
