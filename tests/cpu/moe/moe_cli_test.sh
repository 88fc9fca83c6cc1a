#!/usr/bin/env bash
# `dissect moe`: bad input is refused by name (exit 2) before any process connects or any GPU is
# touched, in both launch modes; so this runs on a machine without a GPU.
set -u
dissect=${1:?usage: moe_cli_test.sh <dissect>}
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

if ((failures)); then echo "$failures failure(s)"; exit 1; fi
echo "all refusals named their object and value"
