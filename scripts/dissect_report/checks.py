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
    off = _p50(R, "gpu-telemetry-rate", "off", "ns per message")
    on = _p50(R, "gpu-telemetry-rate", "N=16", "ns per message")
    ratio("GPU-path time per message, telemetry N = 16 / off", on, off, 1.05, "at most")
    ratio("GPU-path time per message, telemetry off (hooks compiled in) / compiled out", off,
          _p50(R, "gpu-telemetry-rate", "compiled out", "ns per message"), 1.03, "at most")
    if not rows:
        return []
    return ["## Checks (same run)", "",
            "| check | value | asked | met |", "|---|---|---|---|"] + rows + [""]
