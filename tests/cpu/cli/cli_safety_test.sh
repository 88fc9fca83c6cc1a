#!/usr/bin/env bash
# Issue 13, items 7-11, and issue 19's resilience: each check failed before its fix.
set -u
dissect=$1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
quick_latency=(latency --iterations 50 --warmup 5 --runs 1)

# 7: the report directory never reaches a shell.
DISSECT_TEST_THROW_IN=latency "$dissect" report --only latency --output-dir "x';touch INJECTED;'" >/dev/null 2>&1
[ -e INJECTED ] && fail "report --output-dir ran a shell command"
[ -f "x';touch INJECTED;'/results.json" ] || fail "report did not write into the directory named"

# 8: --output does not follow a symbolic link (the link's target is left as it was).
echo precious > target.txt; ln -s target.txt link.json
out=$("$dissect" "${quick_latency[@]}" --output link.json 2>&1) && fail "--output through a symlink succeeded"
[[ "$out" == *"link.json"* && "$out" == *"symbolic link"* ]] || fail "symlink refusal does not name the path: $out"
[ "$(cat target.txt)" = precious ] || fail "--output replaced the symlink's target"
"$dissect" "${quick_latency[@]}" --output plain.json >/dev/null 2>&1 || fail "--output plain.json failed"
python3 -c "import json,sys; json.load(open('plain.json'))" || fail "plain.json is not JSON"
ls -a | grep -q '\.tmp\.' && fail "a temporary file was left behind"

# 9: an output path that cannot be written is refused before measuring (in well under a second).
mkdir adirectory
for bad in /proc/nonexistent/x.json adirectory; do
  start=$(date +%s%N)
  out=$("$dissect" latency --output "$bad" 2>&1); status=$?
  elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
  { [ "$status" -ne 0 ] && [[ "$out" == *"$bad"* ]]; } || fail "--output $bad: exit $status: $out"
  [ "$elapsed_ms" -lt 2000 ] || fail "--output $bad was refused only after ${elapsed_ms} ms (it measured first)"
done

# 10: octal-looking numbers, repeated flags and a silently raised window are refused by name.
expect_refusal() {
  local needle=$1; shift
  local out; out=$("$dissect" "$@" 2>&1) && { fail "dissect $* succeeded"; return; }
  [[ "$out" == *"$needle"* ]] || fail "dissect $*: '$out' does not name '$needle'"
}
expect_refusal "--runs = '010'" latency --runs 010
expect_refusal "--runs is given 2 times" latency --runs 3 --runs 4
expect_refusal "--quick is given 2 times" latency --quick --quick
expect_refusal "--window = 8 is smaller than --batch = 16" goodput --window 8 --batch 16
expect_refusal "--sizes: '18014398509481985K'" goodput --sizes 18014398509481985K  # 2^54+1 K wrapped to 1 KiB
expect_refusal "--sizes: '99999999999999999999'" goodput --sizes 99999999999999999999

# 11: spinners outnumbering cores are detected, waited out with yields, and said in the result.
taskset -c 0 "$dissect" "${quick_latency[@]}" --output one_core.json >/dev/null 2>&1 || fail "latency on one core failed"
grep -q '"oversubscribed"' one_core.json || fail "latency on one core does not say it was oversubscribed"

# Issue 19: a throwing experiment is recorded as failed, the others still run, the exit is non-zero.
DISSECT_TEST_THROW_IN=latency "$dissect" report --quick --only latency,proxy-clock --output-dir rep >/dev/null 2>&1 \
  && fail "report with a failing experiment exited 0"
python3 - <<'PY' || fail "the report's results.json does not record the failure and the other experiment"
import json
d = json.load(open("rep/results.json"))
assert any(f["experiment"] == "latency" and f.get("failed") and "DISSECT_TEST_THROW_IN" in f["error"]
           for f in d["results"]), d
assert any(r["experiment"] == "proxy-clock" and not r.get("failed") for r in d["results"]), d
PY
[ -f rep/report.md ] || fail "the report was not written"
grep -q "Failed experiments" rep/report.md || fail "report.md does not list the failed experiment"
exit $failures
