"""dissect's report: results.json, the paper's values beside ours, the fidelity verdicts, plots.

Modules: results (reading results.json), paper (the paper's values and their counterparts),
tables (markdown), fidelity (one rule per finding of the paper), plots (every figure),
telemetry (the telemetry summary), document (report.md, top to bottom).
"""
