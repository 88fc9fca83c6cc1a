#!/usr/bin/env bash
# Puts the device headers of the peer libraries (DESIGN.md layer 6, peers/) into .deps/peers/
# (ignored by git), headers only, at the versions the lent GPU machine has:
#   .deps/peers/nccl/include      nvidia-nccl-cu13 2.28.9: NCCL's GDAKI with its bundled DOCA GPUNetIO
#   .deps/peers/nvshmem/include   nvidia-nvshmem-cu13 3.4.5: NVSHMEM's IBGDA device code
#   .deps/peers/rdma/include      rdma-core's infiniband/ headers, which NVSHMEM's IBGDA headers
#                                 include (mlx5dv.h), for machines without libibverbs-dev
# Where from, first found: this Python environment's installed wheels (the GPU machine has both,
# and no network), else PyPI through pip (`pip download --no-deps`, only include/ is unpacked).
# CMake finds .deps/peers itself (DISSECT_WITH_PEERS=AUTO); DISSECT_PEERS_ROOT points elsewhere.
#
#   scripts/peer_headers.sh            fill .deps/peers (kept when already at these versions)
#   PEERS_FROM=pypi scripts/peer_headers.sh   ignore the Python environment
set -euo pipefail
cd "$(dirname "$0")/.."
NCCL_VERSION=2.28.9
NVSHMEM_VERSION=3.4.5
DEST=.deps/peers
stamp="nccl $NCCL_VERSION nvshmem $NVSHMEM_VERSION"
if [[ -f $DEST/VERSIONS && "$(cat $DEST/VERSIONS)" == "$stamp" ]]; then
  echo "peer headers present: $DEST ($stamp)"; exit 0
fi
rm -rf "$DEST" && mkdir -p "$DEST"

# The installed wheel's package folder (nvidia/nccl, nvidia/nvshmem) when its version is the pin.
installed() {  # module pip-name version
  [[ ${PEERS_FROM:-} == pypi ]] && return 1
  local have
  have=$(python3 -m pip show "$2" 2>/dev/null | sed -n 's/^Version: //p')
  [[ $have == "$3" ]] || { [[ -n $have ]] && echo "$2 $have installed, $3 wanted: from PyPI" >&2; return 1; }
  python3 -c "import nvidia.$1, os; print(list(nvidia.$1.__path__)[0])" 2>/dev/null
}

fetch() {  # module pip-name version
  local dir
  if dir=$(installed "$@") && [[ -d $dir/include ]]; then
    mkdir -p "$DEST/$1" && cp -r "$dir/include" "$DEST/$1/"
    echo "$2 $3: from the Python environment ($dir)"
    return
  fi
  local tmp; tmp=$(mktemp -d)
  python3 -m pip download --quiet --no-deps --dest "$tmp" "$2==$3"
  (cd "$tmp" && python3 -m zipfile -e ./*.whl x >/dev/null)
  mkdir -p "$DEST/$1" && cp -r "$tmp/x/nvidia/$1/include" "$DEST/$1/"
  rm -rf "$tmp"
  echo "$2 $3: from PyPI (pip download, include/ only)"
}

fetch nccl nvidia-nccl-cu13 "$NCCL_VERSION"
fetch nvshmem nvidia-nvshmem-cu13 "$NVSHMEM_VERSION"
if [[ -f /usr/include/infiniband/mlx5dv.h ]]; then
  mkdir -p "$DEST/rdma/include" && cp -r /usr/include/infiniband "$DEST/rdma/include/"
  echo "rdma-core headers: /usr/include/infiniband"
else
  echo "no /usr/include/infiniband/mlx5dv.h (libibverbs-dev): NVSHMEM's IBGDA adapter needs it" >&2
fi
echo "$stamp" > "$DEST/VERSIONS"
du -sh "$DEST" | sed 's/^/peer headers: /'
