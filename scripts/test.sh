#!/usr/bin/env bash
# Builds and runs every test tier: cpu tests run; gpu and nic tests skip with a reason where the
# hardware is absent. Then the cpu tests again under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
./scripts/build.sh
ctest --test-dir build -L 'cpu|gpu|nic' --output-on-failure -j"$jobs"

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DDISSECT_SANITIZE=ON -DDISSECT_WITH_CUDA=OFF
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan -L cpu --output-on-failure -j"$jobs"
