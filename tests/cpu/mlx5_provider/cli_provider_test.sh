#!/usr/bin/env bash
# --provider across every `dissect` subcommand: a NIC provider that a subcommand cannot drive is
# refused with one line naming the subcommand and what is missing, exit 2, and nothing runs on the
# softnic in its place. `doctor` takes every provider; `latency` and `rate` take mlx5 on two ranks
# and, without an RDMA device here, refuse with one line naming the missing device.
# Usage: cli_provider_test.sh <dissect> <ON|OFF: built with rdma-core>
set -u
dissect=$1
have_mlx5=${2:-ON}
failures=0
mlx5_wired="latency rate"

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_one_line WANT COMMAND ARGS...: exit 2, one line on stderr containing WANT, nothing on
# stdout; bounded, so a command that waits for a peer fails instead of hanging.
expect_one_line() {
  local want=$1; shift
  local out err status
  out=$(timeout 30 "$dissect" "$@" 2>/tmp/cli_provider_err.$$); status=$?
  err=$(cat /tmp/cli_provider_err.$$); rm -f /tmp/cli_provider_err.$$
  local lines; lines=$(printf '%s\n' "$err" | grep -c .)
  if [ "$status" -ne 2 ] || [ "$lines" -ne 1 ] || [[ "$err" != *"$want"* ]] || [ -n "$out" ]; then
    fail "dissect $* -> exit $status, stderr: $err, stdout: $out (expected exit 2 and one line with '$want')"
  fi
}

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
# moe takes mlx5 one rank per process; launched as one process it says so (tests/cpu/moe covers
# the rest of its mlx5 refusals).
mlx5_one_rank_per_process="moe"
for command in $commands report; do
  if [[ " $mlx5_one_rank_per_process " == *" $command "* ]]; then
    expect_one_line "dissect $command runs one rank per process on mlx5" "$command" --provider mlx5
  elif [[ " $mlx5_wired " != *" $command "* ]]; then expect_refused "$command" mlx5; fi
  expect_refused "$command" ibverbs
done

# latency and rate drive mlx5. What stops them here, before anything waits for a peer:
# a build without rdma-core says how to build it; without an RDMA device, the missing device;
# with one (a NIC machine), the single-rank launch.
if ls /dev/infiniband/uverbs* >/dev/null 2>&1; then have_device=1; else have_device=0; fi
for command in $mlx5_wired; do
  if [ "$have_mlx5" != ON ]; then
    expect_one_line "--provider mlx5: this dissect was built without rdma-core" "$command" --provider mlx5
    continue
  fi
  if [ "$have_device" -eq 0 ]; then
    expect_one_line "--provider mlx5 needs an RDMA device, and rdma-core lists no mlx5 device" \
      "$command" --provider mlx5
    # Launched as rank 0 of 2: still refused at once, not after waiting for rank 1.
    DISSECT_RANK=0 DISSECT_WORLD_SIZE=2 DISSECT_BOOTSTRAP_TIMEOUT=5 \
      expect_one_line "needs an RDMA device" "$command" --provider mlx5
  else
    expect_one_line "this is a single-rank launch" "$command" --provider mlx5
  fi
  expect_one_line "--device mlx5_99: no such mlx5 RDMA device" "$command" --provider mlx5 --device mlx5_99
  # --device and --gid-index belong to the mlx5 fabric: --help lists them, and the softnic run
  # refuses them by name rather than ignore them.
  expect_one_line "--device = 'mlx5_0' chooses a port of an mlx5 NIC; --provider softnic has no NIC" \
    "$command" --device mlx5_0 --quick
  expect_one_line "--gid-index = 3 chooses a port of an mlx5 NIC" "$command" --gid-index 3 --quick
  expect_one_line "dissect $command: provider 'ibverbs' is not wired into '$command': it runs on softnic, mlx5" \
    "$command" --provider ibverbs
done

# An unknown provider is refused naming the flag and the supported list.
stderr=$("$dissect" latency --provider nosuchnic 2>&1 >/dev/null)
[[ "$stderr" == *"unknown provider: --provider = 'nosuchnic'"*"allowed values: softnic, mlx5"* ]] || fail "unknown provider: $stderr"

# doctor accepts mlx5 and reports on it (exit 0 ready, 1 a required check failed; never 2).
out=$("$dissect" doctor --provider mlx5 --sysfs-root /nonexistent 2>&1); status=$?
if [ "$status" -eq 2 ] || [[ "$out" != *"dissect doctor (provider mlx5)"* ]]; then
  fail "dissect doctor --provider mlx5 -> exit $status: $out"
fi
exit $failures
