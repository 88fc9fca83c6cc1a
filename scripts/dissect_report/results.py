"""Reading results.json: rows, failed experiments, and what a row says about its own limits."""
import json
import re
from collections import OrderedDict


def load(path):
    with open(path) as f:
        return json.load(f)


def is_failure(record):
    return bool(record.get("failed"))


class Results:
    """The document, split into measured rows (grouped by experiment) and failed experiments."""

    def __init__(self, data):
        self.data = data
        self.rows = [r for r in data.get("results", []) if not is_failure(r)]
        self.failures = [r for r in data.get("results", []) if is_failure(r)]
        self.groups = OrderedDict()
        for r in self.rows:
            self.groups.setdefault(r["experiment"], []).append(r)

    def failure(self, experiment):
        for f in self.failures:
            if f.get("experiment") == experiment:
                return f.get("error", "no error message")
        return None

    def find(self, experiment, label=None, knobs=None):
        return [r for r in self.groups.get(experiment, []) if row_matches(r, label, knobs)]

    def one(self, experiment, label=None, knobs=None):
        found = self.find(experiment, label, knobs)
        return found[0] if found else None


def row_matches(row, label=None, knobs=None):
    if label is not None and row.get("label") != label:
        return False
    return all(str(row.get("knobs", {}).get(k)) == str(v) for k, v in (knobs or {}).items())


def metric(row, name):
    if row is None:
        return None
    for m in row.get("metrics", []):
        if m["name"] == name:
            return m
    return None


def p50(row, name):
    m = metric(row, name)
    return None if m is None else m["p50"]


def run_range(m):
    """The runs' p50 extremes: a spread that stays inside the metric's own domain."""
    values = [run["p50"] for run in m.get("runs", [])] or [m["p50"]]
    return min(values), max(values)


def number(text):
    """The leading number of a knob such as '18.895 GB/s' or '16', else None."""
    match = re.match(r"\s*(-?\d+(?:\.\d+)?)", str(text))
    return float(match.group(1)) if match else None


def environment(row):
    return row.get("environment", {}) or {}


def bottleneck(row):
    """What the row says limited it: a `bottleneck` note, or the rate experiments' `saturated`."""
    for source in (row, environment(row), row.get("knobs", {})):
        if source.get("bottleneck"):
            return str(source["bottleneck"])
    return environment(row).get("saturated")


MODEL_WORDS = ("softnic", "model", "engine")


def model_bound(row):
    """The bottleneck note when it names the NIC model: such a row cannot reproduce a NIC's number."""
    note = bottleneck(row)
    if note and any(w in note.lower() for w in MODEL_WORDS):
        return note
    return None


def is_softnic(row):
    return row.get("provider") == "softnic"


def nic_profile(row):
    # The experiments write the profile among their knobs; older files at the top or in the
    # environment.
    return (row.get("knobs", {}).get("nic_profile") or row.get("nic_profile")
            or environment(row).get("nic_profile"))


def sm_clocks(results):
    return sorted({environment(r)["sm_clock_mhz"] for r in results.rows if "sm_clock_mhz" in environment(r)})
