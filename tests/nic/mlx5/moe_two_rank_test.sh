#!/usr/bin/env bash
# `dissect moe --provider mlx5` on two ranks of this node (environment launch over 127.0.0.1), both
# processes on one NIC and this node's GPU(s): every QP of rank 0 reaches rank 1's (and its own)
# through the NIC's loopback; the same dispatch and combine kernels as on the softnic, every token
# and combined output validated. Skips (77) with the reason when there is no RDMA device or no GPU.
# Usage: moe_two_rank_test.sh <dissect> <output dir>
set -u
dissect=$1
out=${2:-.}
if ! ls /dev/infiniband/uverbs* >/dev/null 2>&1; then
  echo "SKIP: no RDMA device (/dev/infiniband/uverbs* absent)" >&2
  exit 77
fi
if ! ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
  echo "SKIP: no NVIDIA GPU (/dev/nvidia[0-9]* absent): the moe kernels need one" >&2
  exit 77
fi
device=${DISSECT_TEST_DEVICE:-$(ls /sys/class/infiniband 2>/dev/null | head -n1)}
if [ -z "$device" ]; then
  echo "SKIP: /dev/infiniband/uverbs* exists but /sys/class/infiniband lists no device" >&2
  exit 77
fi
port=$((20000 + $$ % 20000))
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
shape=(--ranks 2 --experts 8 --top-k 4 --hidden 1024 --tokens 32 --quick --runs 1)
json="$out/moe_mlx5.json"
rm -f "$json"
for r in 1 0; do
  extra=()
  [ "$r" -eq 0 ] && extra=(--output "$json")
  DISSECT_RANK=$r DISSECT_WORLD_SIZE=2 DISSECT_LOCAL_RANK=$r DISSECT_BOOTSTRAP=127.0.0.1:$port \
    DISSECT_BOOTSTRAP_TIMEOUT=60 timeout 300 "$dissect" moe --provider mlx5 --nic "$device" \
    ${DISSECT_TEST_DOORBELL:+--doorbell "$DISSECT_TEST_DOORBELL"} "${shape[@]}" "${extra[@]}" \
    >"$out/moe_rank$r.txt" 2>&1 &
  eval "pid$r=\$!"
done
wait "$pid0"; status0=$?
wait "$pid1"; status1=$?
cat "$out/moe_rank0.txt" "$out/moe_rank1.txt"
[ "$status0" -eq 0 ] || fail "rank 0 exited $status0"
[ "$status1" -eq 0 ] || fail "rank 1 exited $status1"
grep -q "mlx5: a ConnectX per rank" "$out/moe_rank0.txt" || fail "rank 0 did not label provider mlx5"
grep -q "NOT VALIDATED" "$out/moe_rank0.txt" "$out/moe_rank1.txt" && fail "a token or output did not validate"
grep -q "every rank validated" "$out/moe_rank1.txt" || fail "rank 1 did not say every rank validated"
grep -q '"provider": "mlx5"' "$json" 2>/dev/null || fail "$json lacks provider mlx5"
grep -q "\"nic\": \"$device\"" "$json" 2>/dev/null || fail "$json lacks nic $device"
grep -q '"nic_profile"' "$json" 2>/dev/null && fail "$json claims a softnic timing profile for mlx5"
exit $failures
