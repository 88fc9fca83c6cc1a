#!/usr/bin/env bash
# check_layers.py on a small tree: an upward edge fails naming the file, a downward one passes,
# and an allowlisted edge that disappeared fails too (the list only shrinks).
set -u
check=$1
tree=$(mktemp -d); trap 'rm -rf "$tree"' EXIT
failures=0
mkdir -p "$tree/include/dissect/common" "$tree/include/dissect/gda" "$tree/src/softnic"
echo '#include "dissect/common/atomic.h"' > "$tree/include/dissect/gda/ok.h"
# The edges check_layers.py still allows (its ALLOWED), so that the clean tree passes.
for allowed in src/softnic/queue_pair.cpp src/softnic/softnic.cpp src/softnic/gpu_engine.cu; do
  echo '#include "dissect/telemetry/session.h"' > "$tree/$allowed"
done
python3 "$check" "$tree" > /dev/null || { echo "FAIL: a clean tree was refused"; failures=$((failures + 1)); }

echo '#include "dissect/gda/ok.h"' > "$tree/include/dissect/common/bad.h"
out=$(python3 "$check" "$tree") && { echo "FAIL: common -> gda passed"; failures=$((failures + 1)); }
[[ "$out" == *"include/dissect/common/bad.h:1"* ]] || { echo "FAIL: the error does not name the file: $out"; failures=$((failures + 1)); }
rm "$tree/include/dissect/common/bad.h"

rm "$tree/src/softnic/softnic.cpp"
out=$(python3 "$check" "$tree") && { echo "FAIL: a stale allowlist entry passed"; failures=$((failures + 1)); }
[[ "$out" == *"no longer exists"* ]] || { echo "FAIL: stale entry not named: $out"; failures=$((failures + 1)); }
exit $failures
