#!/usr/bin/env bash
# --provider across every `dissect` subcommand: a NIC provider that a subcommand cannot drive is
# refused with one line naming the subcommand and what is missing, exit 2, and nothing runs on the
# softnic in its place. `doctor` is the one subcommand that takes every provider.
set -u
dissect=$1
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

expect_refused() {
  local command=$1 provider=$2
  local stdout stderr status
  stderr=$("$dissect" "$command" --provider "$provider" 2>&1 >/dev/null); status=$?
  stdout=$("$dissect" "$command" --provider "$provider" 2>/dev/null)
  local lines; lines=$(printf '%s\n' "$stderr" | grep -c .)
  local want="dissect $command: provider '$provider' is not wired into '$command'"
  if [ "$status" -ne 2 ] || [ "$lines" -ne 1 ] || [[ "$stderr" != "$want"* ]]; then
    fail "dissect $command --provider $provider -> exit $status, stderr: $stderr (expected one line starting '$want')"
  fi
  if [[ "$stderr" != *"docs/hardware.md"* ]]; then
    fail "dissect $command --provider $provider: the error does not point at docs/hardware.md"
  fi
  if [ -n "$stdout" ]; then
    fail "dissect $command --provider $provider printed results instead of refusing: $stdout"
  fi
}

commands=$("$dissect" list) || { echo "FAIL: dissect list"; exit 1; }
[ -n "$commands" ] || fail "dissect list printed no experiment"
for command in $commands report; do
  expect_refused "$command" mlx5
  expect_refused "$command" ibverbs
done

# An unknown provider keeps its own message (and the supported list).
stderr=$("$dissect" latency --provider nosuchnic 2>&1 >/dev/null)
[[ "$stderr" == *"unknown provider 'nosuchnic'"*"supported: softnic"* ]] || fail "unknown provider: $stderr"

# doctor accepts mlx5 and reports on it (exit 0 ready, 1 a required check failed; never 2).
out=$("$dissect" doctor --provider mlx5 --sysfs-root /nonexistent 2>&1); status=$?
if [ "$status" -eq 2 ] || [[ "$out" != *"dissect doctor (provider mlx5)"* ]]; then
  fail "dissect doctor --provider mlx5 -> exit $status: $out"
fi
exit $failures
