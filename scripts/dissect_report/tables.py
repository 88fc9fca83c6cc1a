"""Markdown tables: one row per configuration, each metric with the paper's value beside it."""
from collections import OrderedDict

from . import results as res
from .paper import PRIMARY, cite

SUMMARY_KEYS = ("saturated", "bottleneck", "mean chain (descriptors per post)", "worker busy fraction")


def metric_names(rows):
    names = OrderedDict()
    for r in rows:
        for m in r["metrics"]:
            names[(m["name"], m["unit"])] = True
    return list(names)


def split_knobs(rows):
    """Knobs equal in every row (for the header line) and knobs that vary (one column each)."""
    keys = list(OrderedDict((k, True) for r in rows for k in r["knobs"]))
    constant, varying = OrderedDict(), []
    for k in keys:
        values = {r["knobs"].get(k) for r in rows}
        if len(values) == 1:
            constant[k] = values.pop()
        else:
            varying.append(k)
    return constant, varying


def fmt(x):
    if x is None:
        return "—"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.3f}" if abs(x) < 100 else f"{x:.1f}"


def paper_cell(entry):
    if entry is None:
        return "—"
    value = entry["value"]
    text = fmt(value) if value is not None else "–".join(fmt(v) for v in entry["value_range"])
    return text if entry["platform"] == PRIMARY else f"{text} ({entry['platform']})"


def ratio_cell(ours, entry, row):
    if entry is None or entry["value"] in (None, 0) or ours is None:
        return "—"
    mark = " †" if res.model_bound(row) else ""
    return f"{ours / entry['value']:.2f}{mark}"


def experiment_table(rows, paper):
    """The table, and the paper entries it cites (for the sources line under it)."""
    names = metric_names(rows)
    with_paper = {key for key in names if any(paper.counterpart(rows, r, key[0]) for r in rows)}
    _, varying = split_knobs(rows)
    summary = [k for k in SUMMARY_KEYS if any(k in res.environment(r) for r in rows)]
    head = ["case"] + varying + summary
    for key in names:
        head.append(f"{key[0]} ({key[1]}) p50 ± spread")
        if key in with_paper:
            head += [f"{key[0]}: paper ({PRIMARY})", f"{key[0]}: ours / paper"]
    head.append("payload")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    cited = OrderedDict()
    for r in rows:
        cells = [r["label"]] + [str(r["knobs"].get(k, "—")) for k in varying]
        cells += [str(res.environment(r).get(k, "—")) for k in summary]
        for key in names:
            m = {(x["name"], x["unit"]): x for x in r["metrics"]}.get(key)
            cells.append("—" if m is None else f"{fmt(m['p50'])} ± {fmt(m['spread'])}")
            if key in with_paper:
                entry = paper.counterpart(rows, r, key[0])
                if entry:
                    cited[entry["id"]] = entry
                cells += [paper_cell(entry), ratio_cell(m["p50"] if m else None, entry, r)]
        cells.append("validated" if r["payload_validated"] else "**NOT validated**")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines), list(cited.values())


def sources_line(entries, rows):
    if not entries:
        return []
    wheres = OrderedDict((cite(e), True) for e in entries)
    notes = OrderedDict((e["note"], True) for e in entries if e.get("note"))
    lines = ["Paper columns from " + "; ".join(wheres) + " (docs/paper/values.json)."]
    lines += [f"Note: {n}." for n in notes]
    if any(res.model_bound(r) for r in rows):
        lines.append("†: the row says the softnic model was the bottleneck; the ratio compares the model, not a NIC.")
    return [" ".join(lines), ""]


def goodput_points(rows):
    """Per path: the first size at 90 % of the reference, computed from the rows themselves."""
    by_path = OrderedDict()
    for r in rows:
        by_path.setdefault(r["knobs"].get("path", r["label"]), []).append(r)
    points = OrderedDict()
    for path, prs in by_path.items():
        prs.sort(key=lambda r: res.number(r["knobs"].get("payload bytes", 0)) or 0)
        reference = res.number(prs[0]["knobs"].get("reference GB/s", "")) if prs else None
        first = None
        for r in prs:
            value = res.p50(r, "goodput")
            if reference and value is not None and value >= 0.9 * reference:
                first = res.number(r["knobs"].get("payload bytes"))
                break
        points[path] = {"rows": prs, "reference": reference, "first": first}
    return points


def size_text(n):
    if n is None:
        return "not reached"
    n = int(n)
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n:,} B"


def goodput_table(rows, paper):
    lines = [f"| path | reference (ours) | reference: paper ({PRIMARY}) | first size at 90 % (ours) | "
             f"paper ({PRIMARY}) | ours / paper |", "|---|---|---|---|---|---|"]
    reference_entry = next((v for v in paper.values if v["id"] == "F8:reference:P-IB"), None)
    for path, point in goodput_points(rows).items():
        entry = paper.counterpart(rows, point["rows"][0], "first size at 90%") if point["rows"] else None
        ratio = "—"
        if entry and point["first"]:
            ratio = f"{point['first'] / entry['value']:.2f}"
        lines.append(f"| {path} | {fmt(point['reference'])} GB/s | "
                     f"{paper_cell(reference_entry)} GB/s | {size_text(point['first'])} | "
                     f"{size_text(entry['value']) if entry else '—'} | {ratio} |")
    return "\n".join(lines)
