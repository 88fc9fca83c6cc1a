#!/usr/bin/env bash
# The NIC model's long fuzz campaign: nic_model_fuzz (tests/cpu/softnic) in SHARDS shards of
# WQES/SHARDS WQEs each, seeds 1..SHARDS, so a crash (or a sanitizer report) loses one shard, not
# the campaign, and names the seed that reproduces it.
#
#   scripts/fuzz.sh [BUILD_DIR] [WQES] [SHARDS]     defaults: build-asan 10000000 10
#
# Build BUILD_DIR with -DDISSECT_SANITIZE=ON for the ASan + UBSan campaign. Prints the WQE count,
# crashes, mismatches, guard changes and flush violations; exits 1 if any is non-zero.
set -u
build=${1:-build-asan}
total=${2:-10000000}
shards=${3:-10}
binary=$build/tests/cpu/softnic/nic_model_fuzz
if [[ ! -x $binary ]]; then
  echo "fuzz.sh: $binary not built (ninja -C $build nic_model_fuzz)" >&2
  exit 2
fi
per_shard=$(( (total + shards - 1) / shards ))
wqes=0 crashes=0 mismatches=0 guards=0 flushes=0
log=$(mktemp -d)
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
for seed in $(seq 1 "$shards"); do
  "$binary" --wqes "$per_shard" --seed "$seed" >"$log/$seed.out" 2>"$log/$seed.err"
  rc=$?
  counts=$(grep -E '^crashes' "$log/$seed.out")
  done_wqes=$(grep -oE '^nic_model_fuzz seed [0-9]+: [0-9]+' "$log/$seed.out" | awk '{print $4}')
  if [[ -z $counts || $rc -gt 1 ]]; then
    crashes=$((crashes + 1))
    echo "seed $seed: exit $rc, no result (crash or sanitizer report):" >&2
    tail -20 "$log/$seed.err" >&2
    continue
  fi
  wqes=$((wqes + done_wqes))
  read -r m g f < <(echo "$counts" | sed -E 's/.*mismatches ([0-9]+), guard changes ([0-9]+), flush violations ([0-9]+).*/\1 \2 \3/')
  mismatches=$((mismatches + m)) guards=$((guards + g)) flushes=$((flushes + f))
  if [[ $rc -ne 0 ]]; then head -20 "$log/$seed.err" >&2; fi
  echo "seed $seed: $(head -1 "$log/$seed.out")"
done
echo "fuzz: $wqes WQEs through $binary, crashes $crashes, mismatches $mismatches, guard changes $guards, flush violations $flushes"
rm -rf "$log"
[[ $crashes -eq 0 && $mismatches -eq 0 && $guards -eq 0 && $flushes -eq 0 ]]
