"""The paper's published values (docs/paper/values.json) and which of our rows they stand beside."""
import json
import os

from . import results as res

DEFAULT_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "paper", "values.json")
PRIMARY = "P-IB"  # the paper's primary platform for GPU submission and the proxy comparison


class Paper:
    def __init__(self, doc):
        self.doc = doc
        self.values = doc.get("values", [])
        self.by_id = {v["id"]: v for v in self.values}

    def value(self, id):
        return self.by_id[id]["value"]

    def entry(self, id):
        return self.by_id[id]

    def counterpart(self, rows, row, metric_name):
        """The paper's value for this row and metric, the primary platform first."""
        found = [v for v in self.values for m in v.get("match", [])
                 if _matches(m, v, rows, row, metric_name)]
        found.sort(key=lambda v: v["platform"] != PRIMARY)
        return found[0] if found else None

    def experiments_matched(self):
        return sorted({m["experiment"] for v in self.values for m in v.get("match", [])})


def load(path=DEFAULT_PATH):
    try:
        with open(path) as f:
            return Paper(json.load(f))
    except (OSError, ValueError):
        return Paper({"values": []})


def _matches(m, entry, rows, row, metric_name):
    if m["experiment"] != row["experiment"] or m.get("metric", entry["metric"]) != metric_name:
        return False
    if not res.row_matches(row, m.get("label"), m.get("knobs")):
        return False
    knob = m.get("select_max")
    if knob is None:
        return True
    # A sweep's heaviest point stands for the paper's single loaded point.
    peers = [r for r in rows if r["experiment"] == row["experiment"] and res.row_matches(r, m.get("label"), m.get("knobs"))]
    top = max(res.number(r["knobs"].get(knob, "")) or 0 for r in peers)
    return (res.number(row["knobs"].get(knob, "")) or 0) == top


def cite(entry):
    return f"{entry['where']}, {entry['platform']}"
