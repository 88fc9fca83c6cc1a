#!/usr/bin/env bash
# Configures and builds dissect into build/ (CUDA and rdma-core are used when found).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build build -j"$(nproc)"
