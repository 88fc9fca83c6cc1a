#!/usr/bin/env bash
# `dissect latency|rate --provider mlx5 --quick` on two ranks of this node (environment launch over
# 127.0.0.1), both on one NIC: rank 0's RC QP reaches rank 1's through the NIC's loopback. Skips
# (77) with the reason when there is no RDMA device.
# Usage: two_rank_cli_test.sh <dissect> <output dir>
set -u
dissect=$1
out=${2:-.}
if ! ls /dev/infiniband/uverbs* >/dev/null 2>&1; then
  echo "SKIP: no RDMA device (/dev/infiniband/uverbs* absent)" >&2
  exit 77
fi
device=${DISSECT_TEST_DEVICE:-$(ls /sys/class/infiniband 2>/dev/null | head -n1)}
if [ -z "$device" ]; then
  echo "SKIP: /dev/infiniband/uverbs* exists but /sys/class/infiniband lists no device" >&2
  exit 77
fi
port=$((20000 + $$ % 20000))  # a port per run, so parallel ctest jobs do not collide
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# run_two EXPERIMENT ARGS...: rank 1 in the background, rank 0 in the foreground.
run_two() {
  local experiment=$1; shift
  local json="$out/two_rank_$experiment.json"
  rm -f "$json"
  DISSECT_RANK=1 DISSECT_WORLD_SIZE=2 DISSECT_BOOTSTRAP=127.0.0.1:$port DISSECT_BOOTSTRAP_TIMEOUT=60 \
    timeout 300 "$dissect" "$experiment" --provider mlx5 --device "$device" "$@" \
    >"$out/rank1_$experiment.txt" 2>&1 &
  local rank1=$!
  DISSECT_RANK=0 DISSECT_WORLD_SIZE=2 DISSECT_BOOTSTRAP=127.0.0.1:$port DISSECT_BOOTSTRAP_TIMEOUT=60 \
    timeout 300 "$dissect" "$experiment" --provider mlx5 --device "$device" "$@" --output "$json" \
    >"$out/rank0_$experiment.txt" 2>&1
  local status0=$?
  wait "$rank1"; local status1=$?
  cat "$out/rank0_$experiment.txt" "$out/rank1_$experiment.txt"
  [ "$status0" -eq 0 ] || fail "$experiment rank 0 exited $status0"
  [ "$status1" -eq 0 ] || fail "$experiment rank 1 exited $status1"
  grep -q "provider mlx5" "$out/rank0_$experiment.txt" || fail "$experiment: rank 0 did not label provider mlx5"
  grep -q "NOT VALIDATED" "$out/rank0_$experiment.txt" && fail "$experiment: a payload did not validate"
  grep -q "served as the target" "$out/rank1_$experiment.txt" || fail "$experiment: rank 1 did not say it served"
  grep -q '"provider": "mlx5"' "$json" 2>/dev/null || fail "$experiment: $json lacks provider mlx5"
  grep -q "\"device\": \"$device\"" "$json" 2>/dev/null || fail "$experiment: $json lacks device $device"
  port=$((port + 1))
}

run_two latency --quick --runs 1
run_two rate --quick --runs 1 --batch 16
exit $failures
