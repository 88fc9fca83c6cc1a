"""The ratios our own acceptance criteria rest on, each from two rows of the same run."""
from . import results as res


def _p50(R, experiment, label, metric):
    return res.p50(R.one(experiment, label), metric)


def section(R):
    rows = []

    def ratio(what, numerator, denominator, bound, reading):
        if numerator is None or denominator is None or denominator <= 0:
            return
        value = numerator / denominator
        verdict = "yes" if value <= bound else "no"
        rows.append(f"| {what} | {numerator:.3f} / {denominator:.3f} = {value:.2f} | "
                    f"{reading} {bound:g} | {verdict} |")

    floor = _p50(R, "gpu-mechanism-floor", "gpu-fence", "floor")
    for label in ("pointer", "inline"):
        ratio(f"mini-gda issue ({label}, GPU-scope fence) / mechanism floor",
              _p50(R, "gpu-latency", label, "issue"), floor, 1.5, "at most")
    ratio("tuned proxy enqueue / one posted 16 B store",
          _p50(R, "gpu-proxy-latency", "tuned", "issue"),
          _p50(R, "gpu-proxy-latency", "16B posted store (reference)", "issue"), 2.0, "at most")
    # Issue time, not wall time: one thread's wall rate here is the NIC model's (every variant
    # runs at the engine's one-QP rate), so only the submitter's own time shows what telemetry costs.
    issue = {label: _p50(R, "gpu-telemetry-rate", label, "issue ns per message")
             for label in ("compiled out", "off", "N=16")}
    ratio("GPU-path issue time per message, telemetry N = 16 / off", issue["N=16"], issue["off"],
          1.05, "at most")
    ratio("GPU-path issue time per message, telemetry off (hooks compiled in) / compiled out",
          issue["off"], issue["compiled out"], 1.03, "at most")
    if not rows:
        return []
    return ["## Checks (same run)", "",
            "| check | value | asked | met |", "|---|---|---|---|"] + rows + [""]
