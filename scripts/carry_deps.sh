#!/usr/bin/env bash
# Copies the header-only build dependencies the lent GPU machines lack (they have no network):
# nlohmann-json and CLI11, with their CMake package files, into .deps/ (ignored by git), for the
# device tool's `carry`. scripts/device_run.sh installs them from there when present. Then the peer
# libraries' device headers into .deps/peers (scripts/peer_headers.sh; CMake finds them there).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .deps && mkdir -p .deps/usr/include .deps/usr/share/cmake
cp -r /usr/include/nlohmann /usr/include/CLI .deps/usr/include/
cp -r /usr/share/cmake/nlohmann_json /usr/share/cmake/CLI11 .deps/usr/share/cmake/
grep -qx '/.deps/' "$(git rev-parse --git-common-dir)/info/exclude" 2>/dev/null ||
  echo "/.deps/" >> "$(git rev-parse --git-common-dir)/info/exclude"
scripts/peer_headers.sh || echo "peer headers not fetched: the peers adapters will not be built" >&2
echo "carry .deps (device tool: carry [\".deps\"])"
