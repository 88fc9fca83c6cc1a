#!/usr/bin/env bash
# scripts/report.py's "Checks" table: each ratio from two rows of the same results file, with a
# verdict that follows the bound (1.5 met, 2.0 not met), and no section when the rows are absent.
set -uo pipefail
REPORT=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
row() {  # experiment label metric p50
  printf '{"experiment": "%s", "label": "%s", "provider": "softnic", "nic_model": "softnic", "engine": "gpu-kernel", "placement": "gpu", "submitter": "gpu-thread", "pe_layout": "one-gpu", "knobs": {}, "environment": {}, "metrics": [{"name": "%s", "unit": "us", "p50": %s, "spread": 0, "runs": [{"p10": %s, "p50": %s, "p90": %s, "p99": %s, "samples": 1}]}], "payload_validated": true}' "$1" "$2" "$3" "$4" "$4" "$4" "$4" "$4"
}
cat > "$dir/results.json" <<JSON
{"schema": "dissect.results/1", "command": "test", "results": [
 $(row gpu-mechanism-floor gpu-fence floor 0.300),
 $(row gpu-latency pointer issue 0.420),
 $(row gpu-latency inline issue 0.600)
]}
JSON
python3 "$REPORT" "$dir/results.json" "$dir" >/dev/null 2>&1 || { echo "FAIL: report.py failed"; exit 1; }
grep -q "## Checks (same run)" "$dir/report.md" || { echo "FAIL: no Checks section"; failures=$((failures + 1)); }
grep -q "issue (pointer, GPU-scope fence) / mechanism floor | 0.420 / 0.300 = 1.40 | at most 1.5 | yes" "$dir/report.md" ||
  { echo "FAIL: pointer row"; failures=$((failures + 1)); }
grep -q "issue (inline, GPU-scope fence) / mechanism floor | 0.600 / 0.300 = 2.00 | at most 1.5 | no" "$dir/report.md" ||
  { echo "FAIL: inline row"; failures=$((failures + 1)); }
grep -q "proxy" "$dir/report.md" && { echo "FAIL: a check without its rows was printed"; failures=$((failures + 1)); }
cat > "$dir/results.json" <<JSON
{"schema": "dissect.results/1", "command": "test", "results": [$(row latency "inline 8 B" issue 0.1)]}
JSON
python3 "$REPORT" "$dir/results.json" "$dir" >/dev/null 2>&1 || { echo "FAIL: report.py failed (no gpu rows)"; exit 1; }
grep -q "## Checks" "$dir/report.md" && { echo "FAIL: Checks section without its rows"; failures=$((failures + 1)); }
[[ $failures -eq 0 ]] && echo "report checks: ok"
exit $((failures > 0))
