#!/usr/bin/env bash
# `dissect moe` with one rank per process on this node (several processes may share one GPU):
#
#   moe_processes_test.sh <dissect> env N        N processes by DISSECT_RANK/DISSECT_WORLD_SIZE
#   moe_processes_test.sh <dissect> mpirun N     mpirun -np N (Open MPI's variables; the TCP
#                                                rendezvous of the environment bootstrap)
#   moe_processes_test.sh <dissect> missing N    ranks 0..N-2 only: rank N-1 never arrives
#
# A small shape (N ranks, 4 experts each, top-4 of hidden 512, 16 tokens), every token and output
# validated. Passes when every rank exits 0, rank 0's JSON says one rank per process, names the
# launch in its label and validated its payload, and the other ranks wrote no JSON; for
# `missing`, when the ranks that came fail within the bound, naming the missing rank.
# Exit 77 (skipped) without a GPU or, for mpirun, without mpirun. The rendezvous port is per run.
set -u
dissect=${1:?usage: moe_processes_test.sh <dissect> env|mpirun|missing N}
launcher=${2:?launcher}
n=${3:?process count}
port=${DISSECT_BOOTSTRAP_PORT:-$((20000 + $$ % 20000))}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

if ! nvidia-smi -L >/dev/null 2>&1; then echo "no CUDA device: skipped"; exit 77; fi
shape=(--ranks "$n" --experts $((4 * n)) --top-k 4 --hidden 512 --tokens 16 --warps-per-rank 8
       --engine-ctas 4 --runs 2 --iterations 3 --warmup 1 --masked-fraction 0.1)

# run_env <ranks to start> <bootstrap timeout s>: each rank's output in $dir/rank.R, code in rc.R.
run_env() {
  local started=$1 timeout_s=$2
  for ((rank = 0; rank < started; rank++)); do
    ( DISSECT_RANK=$rank DISSECT_WORLD_SIZE=$n DISSECT_LOCAL_RANK=$rank DISSECT_BOOTSTRAP=127.0.0.1:$port \
        DISSECT_BOOTSTRAP_TIMEOUT=$timeout_s CUDA_MODULE_LOADING=EAGER \
        timeout 200 "$dissect" moe "${shape[@]}" --output "$dir/moe.$rank.json" > "$dir/rank.$rank" 2>&1
      echo $? > "$dir/rc.$rank" ) &
  done
  wait
}

# Rank 0's JSON: one rank per process numbered by one of $1 ('|'-separated), the launch in the
# label, validated; no other rank's JSON.
check_json() {
  local source=$1
  for ((rank = 1; rank < n; rank++)); do
    if [[ -e $dir/moe.$rank.json ]]; then echo "FAIL: rank $rank wrote a JSON"; return 1; fi
  done
  python3 - "$dir/moe.0.json" "$n" "$source" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1])); n = int(sys.argv[2]); source = sys.argv[3]
results = [r for r in doc["results"] if r["experiment"] == "moe"]
assert len(results) == 2, f"{len(results)} moe results"
for r in results:
    knobs = r["knobs"]
    assert knobs["launch"].startswith("one rank per process"), knobs["launch"]
    assert any(f"ranks from {one}" in knobs["launch"] for one in source.split("|")), knobs["launch"]
    assert f"{n} processes" in r["label"], r["label"]
    assert r["pe_layout"].startswith(f"{n} PEs, {n} processes"), r["pe_layout"]
    assert r["payload_validated"] is True, f"{r['label']}: not validated: {knobs.get('note')}"
    assert "sm_clock_mhz" in r["environment"] and "globaltimer_step_ns" in r["environment"], r["environment"]
    shares = [m for m in r["metrics"] if m["name"] == "issue share"]
    assert shares and all(0 < s["p50"] <= 100 for s in shares[0]["runs"]), shares
print(f"ok: {n} processes, rank 0's JSON validated ({results[0]['label']}; {results[0]['pe_layout']})")
PY
}

case $launcher in
  env)
    run_env "$n" 60
    for ((rank = 0; rank < n; rank++)); do sed "s/^/[rank $rank] /" "$dir/rank.$rank"; done
    if grep -q "no CUDA device: skipped" "$dir/rank.0"; then exit 77; fi
    for ((rank = 0; rank < n; rank++)); do
      rc=$(cat "$dir/rc.$rank" 2>/dev/null || echo lost)
      if [[ $rc != 0 ]]; then echo "FAIL: rank $rank exited $rc"; exit 1; fi
    done
    check_json DISSECT_RANK || exit 1
    ;;
  mpirun)
    if ! command -v mpirun >/dev/null; then echo "no mpirun on PATH: skipped"; exit 77; fi
    # Every rank gets the same --output; only rank 0 writes it (the others serve). Ranks from
    # OMPI_COMM_WORLD_*, rendezvous over TCP (the environment bootstrap, in a build without MPI).
    mpirun --allow-run-as-root --oversubscribe -np "$n" -x DISSECT_BOOTSTRAP_PORT=$port \
      -x DISSECT_BOOTSTRAP_TIMEOUT=60 -x CUDA_MODULE_LOADING=EAGER \
      timeout 200 "$dissect" moe "${shape[@]}" --output "$dir/moe.0.json" > "$dir/mpirun.log" 2>&1
    rc=$?
    cat "$dir/mpirun.log"
    if grep -q "no CUDA device: skipped" "$dir/mpirun.log"; then exit 77; fi
    if [[ $rc != 0 ]]; then echo "FAIL: mpirun exited $rc"; exit 1; fi
    check_json "Open MPI|MPI_COMM_WORLD" || exit 1  # the environment bootstrap, or MPI's in a build with it
    ;;
  missing)
    run_env $((n - 1)) 5
    missing=$((n - 1))
    for ((rank = 0; rank < n - 1; rank++)); do
      sed "s/^/[rank $rank] /" "$dir/rank.$rank"
      rc=$(cat "$dir/rc.$rank" 2>/dev/null || echo lost)
      if grep -q "no CUDA device: skipped" "$dir/rank.$rank"; then exit 77; fi
      if [[ $rc == 0 || $rc == 124 ]]; then echo "FAIL: rank $rank exited $rc with rank $missing missing"; exit 1; fi
    done
    if ! grep -q "rank $missing" "$dir/rank.0"; then echo "FAIL: rank 0 did not name rank $missing"; exit 1; fi
    echo "ok: with rank $missing missing every other rank failed within the bound, rank 0 naming it"
    ;;
  *)
    echo "moe_processes_test: launcher '$launcher' is not env, mpirun or missing" >&2
    exit 2
    ;;
esac
