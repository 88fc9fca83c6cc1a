#!/usr/bin/env bash
# Bad input to the CLI: one line on stderr naming the value, and a non-zero exit.
set -u
dissect=$1
failures=0

expect_error() {
  local needle=$1; shift
  local stderr status
  stderr=$("$dissect" "$@" 2>&1 >/dev/null); status=$?
  local lines; lines=$(printf '%s\n' "$stderr" | grep -c .)
  if [ "$status" -eq 0 ] || [ "$lines" -ne 1 ] || [[ "$stderr" != *"$needle"* ]]; then
    echo "FAIL: dissect $* -> exit $status, stderr: $stderr (expected one line containing '$needle')"
    failures=$((failures + 1))
  fi
}

expect_error "'nosuchnic'" latency --provider nosuchnic
expect_error "--size = 4096" latency --size 4096
expect_error "--size = 2" latency --size 2
expect_error "--sq-depth = 0" latency --sq-depth 0
expect_error "--sq-depth = 48" latency --sq-depth 48
expect_error "--sq-depth = 65536" latency --sq-depth 65536
expect_error "'12x'" latency --iterations 12x
expect_error "--bogus" latency --bogus 1
expect_error "'frobnicate'" frobnicate

# gpu-rate refuses a shape it cannot run, before it looks for a GPU (built where nvcc is).
if "$dissect" list | grep -qx gpu-rate; then
  expect_error "one thread per QP, not 32" gpu-rate --threads 32 --sharing exclusive
  expect_error "whole warps per QP, not 16" gpu-rate --threads 16 --sharing cooperative
  expect_error "is not a multiple of --ctas" gpu-rate --threads 16 --qps 2 --ctas 4
  expect_error "each entry is off, disabled or a power of two N" gpu-rate --telemetry 0,3
  expect_error "'disable' in 'off,disable'" gpu-rate --telemetry off,disable
  expect_error "each thread drives --qps / --threads QPs alone" gpu-rate --threads 2 --qps 4 --sharing shared
  expect_error "--qps item 0 is out of range" gpu-completion-scope --qps 1,0
  expect_error "'x'" nic-ceiling --qps 1,x
  # No flag parsed and ignored: a knob the run has no use for is refused by name.
  expect_error "--engine-ctas sizes the softnic's GPU engine kernel; --engine host-thread has none" \
    gpu-latency --engine host-thread --engine-ctas 2
  expect_error "--av full sizes the DC address vector; --transport rc has none" gpu-latency --av full
  expect_error "--transport dc: --path gdaki posts through its own RC QP code" gpu-latency --transport dc --path gdaki
  expect_error "unknown flag --engine" gpu-proxy-latency --engine host-thread
  expect_error "--raw: gpu-telemetry-rate times whole runs" gpu-telemetry-rate --raw
  expect_error "--blocks = 529" gpu-kernel-cost --blocks 529
  expect_error "must exceed --messages' largest (16)" gpu-kernel-cost --compute-steps 16
  expect_error "'12'" gpu-kernel-cost --live 12
  expect_error "--worker-sq-depth 8: below --proxy-batch 16" gpu-load --path mini-proxy --worker-sq-depth 8
  expect_error "unknown flag --worker-sq-depth" gpu-load --path mini-gda --worker-sq-depth 64
fi
expect_error "--device = 'mlx5_0' chooses a port of an mlx5 NIC" rate --device mlx5_0

# Every experiment lists its flags under --help (CLI11), exits 0 and measures nothing.
for experiment in $("$dissect" list) report; do
  help=$(timeout 20 "$dissect" "$experiment" --help 2>&1); status=$?
  if [ "$status" -ne 0 ] || [[ "$help" != *"--provider"* ]] || [[ "$help" != *"--help"* ]]; then
    echo "FAIL: dissect $experiment --help -> exit $status: $help"; failures=$((failures + 1))
  fi
done

# And good input runs and validates its payload.
out=$("$dissect" latency --iterations 50 --warmup 5 --runs 1 2>&1) || { echo "FAIL: good run: $out"; failures=$((failures + 1)); }
if [[ "$out" != *"valid"* ]] || [[ "$out" == *"NOT VALIDATED"* ]]; then
  echo "FAIL: good run did not report a validated payload: $out"; failures=$((failures + 1))
fi
exit $failures
