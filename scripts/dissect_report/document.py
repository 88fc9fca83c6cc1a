"""report.md, top to bottom: summary, one section per experiment, fidelity, checks, failures."""
import os
from collections import OrderedDict

from . import checks, fidelity, plots, tables, telemetry
from . import results as res

MACHINE_KEYS = ("machine", "host", "gpu", "gpu_name", "device_name", "cpu_model")
SOFTNIC_NOTE = ("> Numbers measured on the **softnic**, a software NIC model: they measure the submitter side of "
                "the mechanism plus the model, not a ConnectX. Compare differences between configurations with the "
                "paper, not absolute completion times.")


def described_machine(env):
    """`host: GPU ..., CPU ... (N cores)` from the machine a result names (dissect/bench/machine.h)."""
    if not env.get("host"):
        return None
    parts = []
    if env.get("gpu"):
        parts.append(f"GPU {env['gpu']}")
    if env.get("cpu_model"):
        cores = f" ({env['cpu_cores']} cores)" if env.get("cpu_cores") else ""
        parts.append(f"CPU {env['cpu_model']}{cores}")
    return f"{env['host']}" + (f": {', '.join(parts)}" if parts else "")


def machine(R):
    environments = [res.environment(r) for r in R.rows]
    # A GPU row names the device it ran on: prefer it to a CPU row's list of the machine's GPUs.
    for env in sorted(environments, key=lambda e: "sm_clock_mhz" not in e):
        described = described_machine(env)
        if described:
            return described
    for source in [R.data] + environments:
        for k in MACHINE_KEYS:
            if source.get(k):
                return str(source[k])
    gpu = sorted({r["experiment"] for r in R.rows if r.get("submitter") == "gpu-thread"})
    return f"a GPU host ({len(gpu)} GPU experiments)" if gpu else "CPU only (no GPU rows)"


def providers(R):
    seen = OrderedDict()
    for r in R.rows:
        profile = res.nic_profile(r) or ("fast" if res.is_softnic(r) else "—")
        seen[(r["provider"], r.get("nic_model", ""), profile)] = True
    return "; ".join(f"**{p}** ({m}), NIC profile {f}" for p, m, f in seen) or "—"


def summary(R, verdicts):
    clocks = res.sm_clocks(R)
    lines = ["# dissect report", "", "## Summary", "",
             f"- Command: `{R.data.get('command', '?')}`",
             f"- Machine: {machine(R)}",
             f"- SM clock: {', '.join(clocks) + ' MHz (effective, clock64 against %globaltimer)' if clocks else 'no GPU rows'}",
             f"- Provider: {providers(R)}",
             f"- Experiments: {len(R.groups)} measured" + (f", **{len(R.failures)} failed** "
             f"({', '.join(f.get('experiment', '?') for f in R.failures)})" if R.failures else ""), ""]
    if any(res.is_softnic(r) for r in R.rows):
        lines += [SOFTNIC_NOTE, ""]
    return lines + fidelity.glance(verdicts)


def context_line(row):
    env = res.environment(row)
    parts = [f"provider **{row['provider']}** ({row['nic_model']})", f"engine {row['engine']}",
             f"queue placement {row['placement']}", f"submitter {row['submitter']}", f"PE layout: {row['pe_layout']}"]
    if res.nic_profile(row):
        parts.append(f"NIC profile {res.nic_profile(row)}")
    if "sm_clock_mhz" in env:
        parts.append(f"SM clock {env['sm_clock_mhz']} MHz")
    return "; ".join(parts)


def experiment_section(experiment, rows, paper, out_dir, notes):
    table, cited = tables.experiment_table(rows, paper)
    lines = [f"## {experiment}", "", context_line(rows[0]), ""]
    if res.is_softnic(rows[0]):
        lines += ["Measured on a software NIC model (softnic), not a ConnectX.", ""]
    lines += ["Knobs (all rows): " + ", ".join(f"{k}={v}" for k, v in tables.split_knobs(rows)[0].items()), "",
              table, ""]
    lines += tables.sources_line(cited, rows)
    if experiment in ("goodput", "gpu-goodput"):
        lines += [tables.goodput_table(rows, paper), ""]
    env = res.environment(rows[0])
    if env:
        lines += ["Environment (first row): " + ", ".join(f"{k}={v}" for k, v in env.items()), ""]
    image = plots.plot(experiment, rows, paper, out_dir, notes)
    if image:
        lines += [f"![{experiment}]({image})", ""]
    return lines


def failures_section(R):
    if not R.failures:
        return []
    lines = ["## Failed experiments", "", "| experiment | error |", "|---|---|"]
    for f in R.failures:
        lines.append(f"| {f.get('experiment', '?')} | {str(f.get('error', 'no error message')).replace('|', '/')} |")
    return lines + [""]


def guarded(notes, what, build, *args):
    """One section's failure is a note, not a lost report."""
    try:
        return build(*args)
    except Exception as e:
        notes.append(f"section `{what}` could not be written: {type(e).__name__}: {e}")
        return []


def write(R, paper, out_dir, telemetry_path=None):
    notes = []
    verdicts = guarded(notes, "fidelity", fidelity.evaluate, R, paper) or []
    lines = summary(R, verdicts)
    lines += failures_section(R)
    for experiment, rows in R.groups.items():
        lines += guarded(notes, experiment, experiment_section, experiment, rows, paper, out_dir, notes)
    if verdicts:
        lines += fidelity.section(verdicts, any(res.is_softnic(r) for r in R.rows))
    lines += guarded(notes, "checks", checks.section, R)
    if telemetry_path:
        lines += telemetry.section(telemetry_path, out_dir, notes)
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write("\n".join(lines))
    return notes
