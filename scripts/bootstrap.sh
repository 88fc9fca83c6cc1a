#!/usr/bin/env bash
# Installs every dependency of dissect on a fresh Debian/Ubuntu machine: the build tools, GoogleTest,
# Google Benchmark, nlohmann-json and CLI11 (the JSON files and the suite's flags), rdma-core's
# headers (the mlx5/ibverbs providers and the WQE byte oracle), matplotlib for the report's plots
# and jsonschema for the results schema test. CUDA is optional and detected by CMake.
set -euo pipefail
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
packages="cmake make g++ python3 python3-pip libgtest-dev libgmock-dev libbenchmark-dev libibverbs-dev rdma-core nlohmann-json3-dev libcli11-dev"
missing=""
for p in $packages; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
fi
# The results schema test (tests/cpu/report) validates with jsonschema, packaged by Debian.
if ! python3 -c "import jsonschema" >/dev/null 2>&1; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-jsonschema
fi
if ! python3 -c "import matplotlib" >/dev/null 2>&1; then
  python3 -m pip install --quiet matplotlib 2>/dev/null \
    || python3 -m pip install --quiet --break-system-packages matplotlib
fi
