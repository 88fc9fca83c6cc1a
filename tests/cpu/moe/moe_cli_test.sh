#!/usr/bin/env bash
# `dissect moe`: bad input is refused by name (exit 2) before any process connects or any GPU is
# touched, in both launch modes; so this runs on a machine without a GPU.
set -u
dissect=${1:?usage: moe_cli_test.sh <dissect> [ON|OFF: built with rdma-core]}
have_mlx5=${2:-ON}
failures=0

# expect_refusal <text the error must contain> <env assignments...> -- <dissect moe arguments...>
expect_refusal() {
  local want=$1; shift
  local vars=()
  while [[ $1 != -- ]]; do vars+=("$1"); shift; done
  shift
  local err rc
  err=$(env "${vars[@]}" "$dissect" moe "$@" 2>&1 >/dev/null); rc=$?
  if [[ $rc != 2 || $err != *"$want"* ]]; then
    echo "FAIL: ${vars[*]} dissect moe $*: exit $rc, stderr: $err (wanted exit 2 naming '$want')"
    failures=$((failures + 1))
  else
    echo "ok: ${vars[*]} dissect moe $*: $err"
  fi
}

expect_refusal "--masked-fraction '1.5'" X=1 -- --masked-fraction 1.5
expect_refusal "--masked-fraction 'half'" X=1 -- --masked-fraction half
# One rank per process: the world against --ranks and the experts, --device left to the local rank.
expect_refusal "4 processes but the shape has 8 ranks" DISSECT_RANK=0 DISSECT_WORLD_SIZE=4 -- --ranks 8
expect_refusal "256 experts (--experts) do not spread evenly over a world of 3" \
  DISSECT_RANK=0 DISSECT_WORLD_SIZE=3 --
expect_refusal "--device 1: launched as one rank per process" DISSECT_RANK=0 DISSECT_WORLD_SIZE=2 -- --device 1
expect_refusal "4 processes but the shape has 8 ranks" OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=4 \
  OMPI_COMM_WORLD_LOCAL_RANK=0 -- --ranks 8
expect_refusal "DISSECT_RANK" DISSECT_RANK=x DISSECT_WORLD_SIZE=2 --

# --provider mlx5: one rank per process on mini-gda, no softnic knob; the softnic takes no mlx5 knob.
# (Exit 2 and the text, before any process connects: with a world of 2 nothing waits for rank 1.)
P2=(DISSECT_RANK=0 DISSECT_WORLD_SIZE=2 DISSECT_BOOTSTRAP_TIMEOUT=5)
expect_refusal "dissect moe runs one rank per process on mlx5" X=1 -- --provider mlx5
expect_refusal "would hold all 4 ranks (--ranks 4)" X=1 -- --provider mlx5 --ranks 4 --experts 8
expect_refusal "--transport mini-proxy with --provider mlx5: mini-proxy's workers run on the softnic only" \
  "${P2[@]}" -- --provider mlx5 --transport mini-proxy
expect_refusal "--nic-profile = cx7-ib is a knob of the softnic model" "${P2[@]}" -- --provider mlx5 --nic-profile cx7-ib
expect_refusal "--engine-ctas = 4 is a knob of the softnic model" "${P2[@]}" -- --provider mlx5 --engine-ctas 4
expect_refusal "--nic = 'mlx5_0' is a knob of an mlx5 NIC; --provider softnic has no NIC" X=1 -- --nic mlx5_0
expect_refusal "--gid-index = 3 is a knob of an mlx5 NIC" X=1 -- --gid-index 3
expect_refusal "--doorbell = cpu-assisted is a knob of an mlx5 NIC" X=1 -- --doorbell cpu-assisted
expect_refusal "--device 1: launched as one rank per process" "${P2[@]}" -- --provider mlx5 --device 1
expect_refusal "unknown provider: --provider = 'nosuchnic'" X=1 -- --provider nosuchnic
# What this host lacks, named before the bootstrap waits for rank 1: rdma-core in the build, an
# RDMA device, or the device --nic names.
if [[ $have_mlx5 != ON ]]; then
  expect_refusal "--provider mlx5: this dissect was built without rdma-core" "${P2[@]}" -- --provider mlx5
elif ! ls /dev/infiniband/uverbs* >/dev/null 2>&1; then
  expect_refusal "--provider mlx5 needs an RDMA device, and rdma-core lists no mlx5 device" "${P2[@]}" -- --provider mlx5
  expect_refusal "--nic mlx5_99: no such mlx5 RDMA device on this host (rdma-core lists: none)" \
    "${P2[@]}" -- --provider mlx5 --nic mlx5_99
else
  expect_refusal "--nic mlx5_99: no such mlx5 RDMA device on this host" "${P2[@]}" -- --provider mlx5 --nic mlx5_99
fi

if ((failures)); then echo "$failures failure(s)"; exit 1; fi
echo "all refusals named their object and value"
