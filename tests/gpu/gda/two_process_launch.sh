#!/usr/bin/env bash
# Starts a test as two processes (two PEs, one GPU each) on this node:
#
#   two_process_launch.sh env    <binary> <args...>   # DISSECT_RANK/WORLD_SIZE/LOCAL_RANK + TCP rendezvous
#   two_process_launch.sh mpirun <binary> <args...>   # mpirun -np 2 (Open MPI); the ranks come from
#                                                      # OMPI_COMM_WORLD_* (or MPI when built with it)
#
# Exit: 0 both ranks passed, 77 skipped (no rank failed, one skipped; or no mpirun), else 1.
# The rendezvous port is per launch (DISSECT_BOOTSTRAP_PORT, or derived from this shell's pid) so
# concurrent ctest runs do not meet each other; every bootstrap wait is bounded by
# DISSECT_BOOTSTRAP_TIMEOUT (30 s here unless set).
set -u
launcher=${1:?usage: two_process_launch.sh env|mpirun <binary> [args...]}
shift
port=${DISSECT_BOOTSTRAP_PORT:-$((20000 + $$ % 20000))}
timeout_s=${DISSECT_BOOTSTRAP_TIMEOUT:-30}

verdict() {  # combines the two ranks' exit codes
  local fail=0 skip=0
  for rc in "$@"; do
    if [[ $rc == 77 ]]; then skip=1; elif [[ $rc != 0 ]]; then fail=1; fi
  done
  if ((fail)); then echo "two_process_launch: rank exit codes: $*: FAIL"; return 1; fi
  if ((skip)); then echo "two_process_launch: rank exit codes: $*: skipped"; return 77; fi
  return 0
}

case $launcher in
  env)
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
    for rank in 0 1; do
      ( DISSECT_RANK=$rank DISSECT_WORLD_SIZE=2 DISSECT_LOCAL_RANK=$rank \
          DISSECT_BOOTSTRAP=127.0.0.1:$port DISSECT_BOOTSTRAP_TIMEOUT=$timeout_s "$@"
        echo $? > "$dir/rc.$rank" ) 2>&1 | sed -u "s/^/[rank $rank] /" &
    done
    wait
    codes=("$(cat "$dir/rc.0" 2>/dev/null || echo lost)" "$(cat "$dir/rc.1" 2>/dev/null || echo lost)")
    ;;
  mpirun)
    if ! command -v mpirun >/dev/null; then
      echo "two_process_launch: no mpirun on PATH: skipped" >&2
      exit 77
    fi
    # --allow-run-as-root: the lent GPU machines run as root. Each rank reports its own verdict on
    # stdout; mpirun's exit code is that of the first rank that failed (or 0).
    mpirun --allow-run-as-root -np 2 \
      -x DISSECT_BOOTSTRAP_PORT=$port -x DISSECT_BOOTSTRAP_TIMEOUT=$timeout_s -x CUDA_MODULE_LOADING=EAGER \
      "$@"
    rc=$?
    verdict "$rc"
    exit $?
    ;;
  *)
    echo "two_process_launch: launcher '$launcher' is not env or mpirun" >&2
    exit 2
    ;;
esac
verdict "${codes[@]}"
