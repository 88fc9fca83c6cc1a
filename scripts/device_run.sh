#!/usr/bin/env bash
# Builds and runs the GPU tier on a GPU machine in one go: configure (CUDA, archs 90), build the GPU
# tests and experiments, ctest -L gpu, compute-sanitizer memcheck + racecheck on a subset, and the
# §4.1 single-operation experiments (softnic provider) as JSON. Everything lands in $OUT.
#
#   OUT=/some/dir scripts/device_run.sh                 # one GPU: all stages
#   STAGES="tests experiments2" OUT=... scripts/device_run.sh   # two GPUs: the two-GPU layout
#   QUICK=1 ...: --quick experiments, smaller sanitizer subset
#
# Stages: build (always), tests, sanitize (memcheck + racecheck; memcheck of the fuzz replay on a
# subset), fuzz (10^6 fuzzed WQEs through the GPU execute path: fuzz_gpu.log), experiments (one
# GPU: gpu-floor, gpu-latency, gpu-ordering, gpu-inline-sweep through `dissect`, gpu-kernel/gpu and
# host-thread/host engines), experiments2 (two-gpus layout; needs 2
# GPUs), ipc (two-processes layout, launched by environment variables and by mpirun; needs 2
# GPUs), rate (gpu-rate --sweep, the cpu-assisted doorbell, gpu-inline-rate,
# gpu-completion-scope, gpu-inline-sweep), peers (GDAKI / NVSHMEM adapter tests, gpu-latency
# --path), proxy (mini-proxy GPU producer tests + gpu-proxy-latency + its report; alone:
# STAGES="proxy"), telemetry (GPU-path counters test + message rate with telemetry off and on in
# one run; alone: STAGES="telemetry"), moe (dissect moe, both transports and profiles), kcost
# (gpu-kernel-cost, Figure 9), load (gpu-load, gpu-goodput: Figures 6 and 8), rate7 (gpu-proxy-rate:
# Figure 7), hostengine (host-nic-ceiling and proxy-rate with 1 and 4 engine threads), report
# (dissect report --quick into $OUT/report).
# Never changes clocks, MIG or NVLink settings. GTest: the system one, or googletest sources
# carried in build-deps/googletest (built into /tmp/gtest).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/out}
BUILD=${BUILD:-/tmp/dissect-build-gpu}
STAGES=${STAGES:-"tests sanitize fuzz experiments"}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$OUT"
LOG=$OUT/device_run.log
exec > >(tee -a "$LOG") 2>&1
stage() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }
has() { [[ " $STAGES " == *" $1 "* ]]; }

stage "machine"
nvidia-smi -L || true
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv || true
nvcc --version | tail -2 || true

# Header-only dependencies the machine cannot download (scripts/carry_deps.sh fills .deps).
if [[ -d $ROOT/.deps/usr ]]; then cp -r "$ROOT/.deps/usr/." /usr/ && echo "installed .deps (nlohmann-json, CLI11)"; fi

stage "googletest"
PREFIX=""
if ! ls /usr/lib/x86_64-linux-gnu/cmake/GTest/GTestConfig.cmake /usr/local/lib/cmake/GTest/GTestConfig.cmake >/dev/null 2>&1; then
  if [[ -d $ROOT/build-deps/googletest ]]; then
    cmake -S "$ROOT/build-deps/googletest" -B /tmp/gtest-build -DCMAKE_INSTALL_PREFIX=/tmp/gtest \
      -DBUILD_GMOCK=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null && \
      cmake --build /tmp/gtest-build -j "$JOBS" >/dev/null && cmake --install /tmp/gtest-build >/dev/null
    PREFIX="-DCMAKE_PREFIX_PATH=/tmp/gtest"
    echo "built googletest from build-deps/googletest into /tmp/gtest"
  else
    echo "no GTest and no build-deps/googletest: the CPU tests cannot be configured"
  fi
else
  echo "system GTest"
fi

stage "configure + build (CUDA archs 90)"
GEN=""; command -v ninja >/dev/null && GEN="-G Ninja"
cmake -S "$ROOT" -B "$BUILD" $GEN -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDISSECT_WITH_CUDA=ON \
  -DDISSECT_CUDA_ARCHS=90 -DDISSECT_WITH_MLX5=OFF -DDISSECT_WITH_MPI=OFF $PREFIX | tail -12 || exit 1
cmake --build "$BUILD" -j "$JOBS" || exit 1
TEST=$(find "$BUILD" -name gda_gpu_test -type f -perm -u+x | head -1)
D=$BUILD/dissect
# One GPU experiment through `dissect`, its results document in $OUT/exp_NAME.json (merged below).
run_gpu() { local name=$1; shift; timeout ${EXP_TIMEOUT:-300} "$D" "$@" --output "$OUT/exp_$name.json"; echo "--- $name rc=$?"; }
FUZZ=$BUILD/tests/gpu/softnic/nic_model_fuzz_gpu
DC_TEST=$BUILD/tests/gpu/softnic/dc_gpu_test

if has tests; then
  stage "ctest -L gpu"
  (cd "$BUILD" && ctest -L gpu --output-on-failure --timeout 60) 2>&1 | tee "$OUT/ctest_gpu.log"
fi

if has sanitize; then
  # Under compute-sanitizer a persistent engine kernel and a submitter kernel were not seen to run
  # together (measured on the H200: memcheck of gpu_engine_gpu_queues did not finish in 300 s). The GPU engine's device code is checked through stepped_engine instead: a submitter
  # kernel posts and exits, GpuSoftNic::drain() runs the engine kernel until idle, a third kernel
  # polls. The host-engine cases check the submitter kernels against a host-thread engine.
  stage "compute-sanitizer memcheck / racecheck"
  {
    for tool in memcheck racecheck; do
      cases="stepped_engine window_order backlog_runs shared_cq_stepped many_qps_one_warp_stepped many_qps_one_warp_cx7_stepped host_engine_host_queues pe_one_gpu_host_engine"
      [[ -n ${QUICK:-} ]] && cases="stepped_engine window_order backlog_runs shared_cq_stepped many_qps_one_warp_stepped many_qps_one_warp_cx7_stepped host_engine_host_queues"
      for c in $cases; do
        echo "--- $tool $c"
        timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 "$TEST" "$c"
        echo "--- $tool $c rc=$?"
      done
      # DC on the GPU engine: a DCI pool posting, the engine kernel drained, a poller (dc_gpu.cu).
      echo "--- $tool dc_gpu stepped_pool"
      timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 "$DC_TEST" stepped_pool
      echo "--- $tool dc_gpu stepped_pool rc=$?"
    done
  } 2>&1 | tee "$OUT/sanitizer.log" | grep -E "^---|ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL|SKIP"
  # The fuzz campaign's GPU replay (tests/gpu/softnic) under memcheck: the execute path's device
  # code on hostile WQEs. A subset: memcheck runs the replay ~100x slower, and 2*10^4 WQEs (~3000
  # cases) still reach every syndrome the campaign produces (the rarest, LOCAL_LENGTH_ERR, ~4 per
  # 10^4 WQEs) within a few minutes; the 10^6 run is the fuzz stage's, without the sanitizer.
  echo "--- memcheck nic_model_fuzz_gpu"
  timeout 600 compute-sanitizer --tool memcheck --error-exitcode 9 "$FUZZ" --wqes ${FUZZ_SANITIZE_WQES:-20000} --seed 1 \
    > "$OUT/sanitizer_fuzz.log" 2>&1
  echo "--- memcheck nic_model_fuzz_gpu rc=$?"
  grep -E "^nic_model_fuzz_gpu seed|^crashes|ERROR SUMMARY|skipped" "$OUT/sanitizer_fuzz.log"
fi

if has fuzz; then
  # Issue 13: >= 10^6 fuzzed WQEs through the execute path on the GPU, each step checked against the
  # host oracle (nic_model_fuzz_gpu; exit 1 on any mismatch, guard change, flush violation or fault).
  stage "fuzz: GPU replay of the NIC model campaign"
  timeout 600 "$FUZZ" --wqes ${FUZZ_WQES:-1000000} --seed ${FUZZ_SEED:-1} > "$OUT/fuzz_gpu.log" 2>&1
  echo "rc=$?"
  tail -4 "$OUT/fuzz_gpu.log"
fi

if has experiments; then
  # §4.1 on one GPU: the floor, the single operation, Table 4's orderings and the inline sweep on
  # the GPU engine with GPU queues; the single operation on the host engine and with host queues.
  stage "experiments: one GPU"
  for e in gpu-floor gpu-latency gpu-ordering gpu-inline-sweep; do
    run_gpu "${e}_gpu_kernel_gpu" $e --engine gpu-kernel --placement gpu --layout one-gpu ${QUICK:+--quick}
  done
  run_gpu gpu-latency_host_thread_host gpu-latency --engine host-thread --placement host --layout one-gpu ${QUICK:+--quick}
  run_gpu gpu-latency_gpu_kernel_host gpu-latency --engine gpu-kernel --placement host --layout one-gpu ${QUICK:+--quick}
fi

if has experiments2; then
  stage "experiments: two GPUs"
  run_gpu gpu-latency_two_gpus gpu-latency --engine gpu-kernel --placement gpu --layout two-gpus
  run_gpu gpu-floor_two_gpus gpu-floor --engine gpu-kernel --placement gpu --layout two-gpus
fi

if has ipc; then
  # The third PE layout: one process per GPU through CUDA IPC arenas (softnic/ipc.h), both launchers.
  stage "ipc: two processes, one GPU each"
  {
    for launcher in env mpirun; do
      echo "--- $launcher"
      timeout 120 "$ROOT/tests/gpu/gda/two_process_launch.sh" $launcher "$TEST" pe_two_processes
      echo "--- $launcher rc=$?"
    done
  } 2>&1 | tee "$OUT/ipc.log"
fi

if has proxy; then
  # mini-proxy with GPU producers (softnic host-thread engine): the GPU tests, then the Table 3
  # proxy rows with the 16 B store reference, as JSON for the merge and as a report of its own.
  stage "proxy: GPU producers"
  cmake --build "$BUILD" -j "$JOBS" --target proxy_gpu_test dissect || exit 1
  (cd "$BUILD" && ctest -R '^proxy_gpu[.]' --output-on-failure --timeout 60) 2>&1 | tee "$OUT/ctest_proxy_gpu.log"
  timeout ${EXP_TIMEOUT:-300} "$BUILD/dissect" gpu-proxy-latency ${QUICK:+--quick} --output "$OUT/proxy_results.json"
  echo "rc=$?"
  timeout ${EXP_TIMEOUT:-300} "$BUILD/dissect" proxy-latency --quick --output "$OUT/proxy_cpu_results.json"
  echo "rc=$?"
  mkdir -p "$OUT/proxy_report"
  python3 "$ROOT/scripts/report.py" "$OUT/proxy_results.json" "$OUT/proxy_report" && echo "report: $OUT/proxy_report/report.md"
fi

if has telemetry; then
  # GPU-submitted traffic: the counters test (its telemetry file kept under $OUT/telemetry), then
  # the rate and issue time with telemetry compiled out, off and at N = 1, 4, 16, 64 in one run.
  stage "telemetry: GPU path"
  cmake --build "$BUILD" -j "$JOBS" --target telemetry_gpu_test dissect || exit 1
  mkdir -p "$OUT/telemetry"
  (cd "$BUILD" && DISSECT_TELEMETRY_OUTPUT_DIR="$OUT/telemetry" ctest -R '^telemetry_gpu[.]' --output-on-failure --timeout 120) 2>&1 | tee "$OUT/ctest_telemetry_gpu.log"
  run_gpu gpu-telemetry-rate gpu-telemetry-rate --runs ${TELEMETRY_RUNS:-5} ${QUICK:+--quick} | tee "$OUT/telemetry_rate.log"
fi

if has rate; then
  # Issue 14: Table 5 (every mini-gda row), the host-thread doorbell ringer beside GPU submission
  # on the same 16 QPs, Figure 3b, Figure 4, Figure 3a's inline slope; each rate beside the
  # model's ceiling.
  stage "rate: gpu-rate, gpu-inline-rate, gpu-completion-scope"
  D=$BUILD/dissect
  R=${RATE_RUNS:-2}
  run_exp() { local name=$1; shift; timeout ${EXP_TIMEOUT:-240} "$D" "$@" --output "$OUT/$name.json" > "$OUT/$name.txt" 2>&1; echo "--- $name rc=$?"; cat "$OUT/$name.txt"; }
  run_exp gpu_rate_sweep gpu-rate --sweep --runs $R
  run_exp gpu_rate_16qp_direct gpu-rate --threads 16 --qps 16 --ctas 16 --batch 16 --runs $R
  run_exp gpu_rate_16qp_cpu_assisted gpu-rate --threads 16 --qps 16 --ctas 16 --batch 16 --doorbell cpu-assisted --runs $R
  run_exp gpu_completion_scope gpu-completion-scope ${QUICK:+--quick}
  run_exp gpu_inline_rate gpu-inline-rate ${QUICK:+--quick} --runs $R
  run_exp gpu_inline_sweep gpu-inline-sweep --quick --runs $R
fi

if has peers; then
  # Issue 20: the libraries' device code on the softnic (adapters built where .deps/peers or the
  # Python wheels have their headers).
  stage "peers: GDAKI and NVSHMEM IBGDA"
  (cd "$BUILD" && ctest -R '^peers_' --output-on-failure --timeout 120) 2>&1 | tee "$OUT/ctest_peers.log"
  for p in mini-gda gdaki nvshmem-ibgda; do
    timeout 120 "$BUILD/dissect" gpu-latency --path $p --runs 3 --output "$OUT/gpu_latency_$p.json" > "$OUT/gpu_latency_$p.txt" 2>&1
    echo "--- gpu-latency --path $p rc=$?"; cat "$OUT/gpu_latency_$p.txt"
  done
  # Figure 4 through NVSHMEM's own quiets (per-QP ibgda_quiet, PE-wide nvshmemi_ibgda_quiet).
  timeout 240 "$BUILD/dissect" gpu-completion-scope --path nvshmem-ibgda ${QUICK:+--quick} --output "$OUT/gpu_completion_scope_nvshmem.json" > "$OUT/gpu_completion_scope_nvshmem.txt" 2>&1
  echo "--- gpu-completion-scope --path nvshmem-ibgda rc=$?"; cat "$OUT/gpu_completion_scope_nvshmem.txt"
fi

if has moe; then
  # Issue 17: DeepEP low-latency dispatch and combine, 8 ranks on one GPU, DeepSeek-V3 shape, both
  # transports, fast and cx7-ib profiles; every token and combined output validated.
  stage "moe: dispatch and combine"
  (cd "$BUILD" && ctest -R '^moe_' --output-on-failure --timeout 240) 2>&1 | tee "$OUT/ctest_moe.log"
  for t in mini-gda mini-proxy; do
    for p in fast cx7-ib; do
      timeout ${EXP_TIMEOUT:-240} "$BUILD/dissect" moe --transport $t --nic-profile $p ${QUICK:+--runs 2} \
        --output "$OUT/moe_${t}_$p.json" --tsv "$OUT/moe_${t}_$p.tsv" > "$OUT/moe_${t}_$p.txt" 2>&1
      echo "--- moe --transport $t --nic-profile $p rc=$?"; cat "$OUT/moe_${t}_$p.txt"
    done
  done
fi

if has kcost; then
  # Issue 16: Figure 9, what communication code costs the enclosing kernel.
  stage "kcost: gpu-kernel-cost"
  (cd "$BUILD" && ctest -R '^kernel_cost' --output-on-failure --timeout 240) 2>&1 | tee "$OUT/ctest_kernel_cost.log"
  timeout ${EXP_TIMEOUT:-300} "$BUILD/dissect" gpu-kernel-cost ${QUICK:+--runs 3} --output "$OUT/gpu_kernel_cost.json" > "$OUT/gpu_kernel_cost.txt" 2>&1
  echo "--- gpu-kernel-cost rc=$?"; cat "$OUT/gpu_kernel_cost.txt"
fi

if has load; then
  # Issue 15: the proxy design space with GPU producers under load (Figures 6 and 8): the probe's
  # latency as the background grows, paced, and goodput by message size, both paths, two profiles.
  stage "load: gpu-load, gpu-goodput"
  (cd "$BUILD" && ctest -R '^gpu_load_test' --output-on-failure --timeout 300) 2>&1 | tee "$OUT/ctest_load.log"
  run_load() { local name=$1; shift; timeout ${EXP_TIMEOUT:-240} "$BUILD/dissect" "$@" --output "$OUT/$name.json" > "$OUT/$name.txt" 2>&1; echo "--- $name rc=$?"; cat "$OUT/$name.txt"; }
  for p in ${LOAD_PROFILES:-fast cx7-ib}; do
    run_load gpu_load_$p gpu-load --nic-profile $p ${QUICK:+--quick}
    run_load gpu_goodput_$p gpu-goodput --nic-profile $p ${QUICK:+--quick}
  done
  run_load gpu_load_reserved_paced gpu-load --probe reserved --background 64 --pace-mops 30 ${QUICK:+--quick}
  # mini-proxy with two chains in flight a worker: the backlog sits in the rings, and cx7-ib's
  # completion latency over the send queues (not the host engine) bounds the background.
  run_load gpu_load_proxy_sq32_cx7-ib gpu-load --path mini-proxy --nic-profile cx7-ib --background 0,64 \
    --worker-sq-depth 32 ${QUICK:+--quick}
fi

if has rate7; then
  # Figure 7 with GPU producers: rate against workers at B = 1 and 16 over 32 rings, the T = 1
  # batch sweep, fast profile (and cx7-ib with RATE7_PROFILES).
  stage "rate7: gpu-proxy-rate"
  (cd "$BUILD" && ctest -R '^gpu_load_test.proxy_rate' --output-on-failure --timeout 300) 2>&1 | tee "$OUT/ctest_rate7.log"
  for p in ${RATE7_PROFILES:-fast}; do
    timeout ${EXP_TIMEOUT:-240} "$BUILD/dissect" gpu-proxy-rate --nic-profile $p ${QUICK:+--quick} \
      --output "$OUT/gpu_proxy_rate_$p.json" > "$OUT/gpu_proxy_rate_$p.txt" 2>&1
    echo "--- gpu_proxy_rate_$p rc=$?"; cat "$OUT/gpu_proxy_rate_$p.txt"
  done
fi

if has hostengine; then
  # The softnic host engine on this host: its own ceiling by engine threads and QPs, and proxy-rate
  # (host producers) with 1 and 4 engine threads; what a clock_gettime costs here (CQE timestamps).
  stage "hostengine: host-nic-ceiling, proxy-rate"
  python3 -c 'import time; n=200000; t=time.perf_counter_ns(); [time.clock_gettime_ns(time.CLOCK_MONOTONIC) for _ in range(n)]; print("clock_gettime (python loop, upper bound): %.0f ns" % ((time.perf_counter_ns()-t)/n))'
  cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null
  timeout ${EXP_TIMEOUT:-240} "$D" host-nic-ceiling --engine-threads 1,2,4,8 --qps 1,4,8,16 ${QUICK:+--quick} \
    --output "$OUT/host_nic_ceiling.json" > "$OUT/host_nic_ceiling.txt" 2>&1
  echo "--- host_nic_ceiling rc=$?"; cat "$OUT/host_nic_ceiling.txt"
  for t in ${HOSTENGINE_THREADS:-1 4}; do
    timeout ${EXP_TIMEOUT:-240} "$D" proxy-rate --engine-threads $t ${QUICK:+--quick} \
      --output "$OUT/proxy_rate_e$t.json" > "$OUT/proxy_rate_e$t.txt" 2>&1
    echo "--- proxy_rate_e$t rc=$?"; cat "$OUT/proxy_rate_e$t.txt"
  done
fi

if has report; then
  # Every experiment of the report in one run (--quick), its tables, fidelity section and plots.
  stage "report --quick"
  timeout ${REPORT_TIMEOUT:-420} "$BUILD/dissect" report --quick --output-dir "$OUT/report" > "$OUT/report.log" 2>&1
  echo "--- report rc=$?"; tail -5 "$OUT/report.log"
fi

stage "merge"
python3 - "$OUT" <<'EOF'
import glob, json, os, sys
out = sys.argv[1]
merged = []
for f in sorted(glob.glob(os.path.join(out, "exp_*.json"))):
    try:
        merged += json.load(open(f))["results"]  # a `dissect --output` results document
    except Exception as e:
        print("could not read", f, e)
if merged:
    json.dump({"results": merged}, open(os.path.join(out, "gpu_experiments.json"), "w"), indent=1)
    for f in glob.glob(os.path.join(out, "exp_*.json")):
        os.remove(f)
    print("merged", len(merged), "results")
EOF
echo "done"
