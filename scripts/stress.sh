#!/usr/bin/env bash
# The long multi-producer ring stress: ring_stress (tests/cpu/stress) over every configuration,
# OPS operations in all (default 10^7). Prints ops, lost, duplicated, reordered per configuration
# and in total; exits non-zero on any loss, duplicate, reorder or failed producer.
#   scripts/stress.sh [BUILD_DIR] [OPS]      defaults: build-cpu 10000000
set -eu
build=${1:-build-cpu}
ops=${2:-10000000}
binary=$build/tests/cpu/stress/ring_stress
[[ -x $binary ]] || { echo "stress.sh: $binary not built (ninja -C $build ring_stress)" >&2; exit 2; }
exec "$binary" --ops "$ops"
