#!/usr/bin/env bash
# check_layers.py on a small tree: an upward edge fails naming the file, a downward one passes,
# and so does a provider reaching telemetry only through the nic layer's observer.
set -u
check=$1
tree=$(mktemp -d); trap 'rm -rf "$tree"' EXIT
failures=0
mkdir -p "$tree/include/dissect/common" "$tree/include/dissect/gda" "$tree/src/softnic"
echo '#include "dissect/common/atomic.h"' > "$tree/include/dissect/gda/ok.h"
echo '#include "dissect/nic/observer.h"' > "$tree/src/softnic/softnic.cpp"
python3 "$check" "$tree" > /dev/null || { echo "FAIL: a clean tree was refused"; failures=$((failures + 1)); }

echo '#include "dissect/gda/ok.h"' > "$tree/include/dissect/common/bad.h"
out=$(python3 "$check" "$tree") && { echo "FAIL: common -> gda passed"; failures=$((failures + 1)); }
[[ "$out" == *"include/dissect/common/bad.h:1"* ]] || { echo "FAIL: the error does not name the file: $out"; failures=$((failures + 1)); }
rm "$tree/include/dissect/common/bad.h"

echo '#include "dissect/telemetry/session.h"' > "$tree/src/softnic/softnic.cpp"
out=$(python3 "$check" "$tree") && { echo "FAIL: softnic -> telemetry passed"; failures=$((failures + 1)); }
[[ "$out" == *"src/softnic/softnic.cpp:1"* ]] || { echo "FAIL: the error does not name the file: $out"; failures=$((failures + 1)); }
exit $failures
