# Helpers for an A/B call on a lent GPU machine, sourced by the call's script: the call's time
# budget, trees built side by side from `git archive` tarballs or the working tree, runs that skip
# themselves when the budget is short, and one tarball back. The trees of one call are measured
# interleaved on the same machine, so their figures compare; figures of two calls do not.
#
#   source scripts/device_ab.sh
#   ab_start 560 c1                        # budget (s) and $OUT/c1 as $R
#   ab_tree a .ab/a.tgz 6 & ab_tree h HEAD 10 & wait   # /tmp/a-build/dissect, /tmp/h-build/dissect
#   for t in a h; do ab_run $t gl_fast gpu-latency --quick --runs 3; done
#   ab_grep a gl_fast "put\+completion us"
#   ab_tier e .ab/e.tgz 10                 # tree e with its GPU tier (ctest -L gpu) in $R
#   ab_sanitize stepped_engine window_order stepped_pool
#   ab_pack                                # $OUT/c1.tgz, the one file that comes back
#
# A tree's build has no tests (DISSECT_BUILD_TESTS=OFF); the GPU tier and compute-sanitizer need
# scripts/device_run.sh (STAGES="tests"), which builds the working tree into /tmp/dissect-build-gpu.
# Carry .deps (scripts/carry_deps.sh) and the tarballs' folder.

AB_START=0
AB_LIMIT=0

# The call's budget in seconds from now, and its results folder $OUT/NAME (as R).
ab_start() {
  AB_START=$(date +%s)
  AB_LIMIT=$1
  R=$OUT/$2
  mkdir -p "$R"
  cp -r .deps/usr/. /usr/ 2>/dev/null
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
}
ab_left() { echo $((AB_LIMIT - ($(date +%s) - AB_START))); }
ab_el() { echo "[$(($(date +%s) - AB_START)) s]"; }
# True when at least $1 seconds are left; otherwise says that `$2` was skipped.
ab_room() { (($(ab_left) >= $1)) || { echo "=== skipped $2: $(ab_left) s left"; return 1; }; }

# Builds `dissect` of tree NAME from a tarball (`git archive --format=tar.gz`) or from HEAD of the
# working tree, with JOBS compile jobs, into /tmp/NAME-build; its log is $R/NAME_build.log.
ab_tree() {
  local name=$1 source=$2 jobs=${3:-8} dir=/tmp/$1
  mkdir -p "$dir"
  if [[ $source == HEAD ]]; then git archive HEAD | tar -x -C "$dir"; else tar -xzf "$source" -C "$dir"; fi
  cp -r .deps "$dir"/
  { cmake -S "$dir" -B "$dir-build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDISSECT_WITH_CUDA=ON \
      -DDISSECT_CUDA_ARCHS=90 -DDISSECT_WITH_MLX5=OFF -DDISSECT_WITH_MPI=OFF -DDISSECT_BUILD_TESTS=OFF \
      ${AB_CMAKE_FLAGS:-} && cmake --build "$dir-build" -j "$jobs" --target dissect; } > "$R/${name}_build.log" 2>&1
  echo "$name build rc=$? $(ab_el)" | tee -a "$R/${name}_build.log"
}

# Runs `dissect ARGS` of tree NAME into $R/NAME_RUN.{json,txt}, within AB_TIMEOUT seconds (20).
ab_run() {
  local tree=$1 run=$2
  shift 2
  ab_room $((${AB_TIMEOUT:-20} + 5)) "$tree $run" || return 1
  timeout "${AB_TIMEOUT:-20}" "/tmp/$tree-build/dissect" "$@" --output "$R/${tree}_$run.json" > "$R/${tree}_$run.txt" 2>&1
  echo "--- $tree $run rc=$? $(ab_el)"
}

# The lines of run RUN of tree NAME whose text matches PATTERN, metric and p50 only.
ab_grep() { grep -E "$3" "$R/${1}_$2.txt" | grep -v "^experiment" | awk '{$NF=""; $(NF-1)=""; $(NF-2)=""; print "   ", $0}'; }

# Builds tree NAME from tarball TGZ with the tests into /tmp/dissect-build-gpu and runs its GPU tier
# (scripts/device_run.sh STAGES="tests", JOBS compile jobs, within LIMIT seconds); its dissect is
# then /tmp/NAME-build/dissect as ab_run expects, and $R/ctest_gpu.log holds the tier.
ab_tier() {
  local name=$1 source=$2 jobs=${3:-10} limit=${4:-330}
  mkdir -p "/tmp/$name" && tar -xzf "$source" -C "/tmp/$name" && cp -r .deps build-deps "/tmp/$name"/
  (cd "/tmp/$name" && JOBS=$jobs QUICK=1 STAGES="tests" OUT=$R timeout "$limit" scripts/device_run.sh > /dev/null 2>&1)
  mkdir -p "/tmp/$name-build" && ln -sf /tmp/dissect-build-gpu/dissect "/tmp/$name-build/dissect"
  rm -f "$R/device_run.log"
  echo "$name GPU tier $(grep -hE 'tests passed|tests failed' "$R/ctest_gpu.log" | head -1) $(ab_el)"
}

# compute-sanitizer memcheck and racecheck of the GPU tier's CASES (gda_gpu_test cases;
# stepped_pool is dc_gpu_test's), 25 s each, skipped when the budget is short.
ab_sanitize() {
  local build=/tmp/dissect-build-gpu tool c binary
  local gda dc
  gda=$(find $build -name gda_gpu_test -type f | head -1)
  dc=$(find $build -name dc_gpu_test -type f | head -1)
  for tool in memcheck racecheck; do
    for c in "$@"; do
      ab_room 25 "$tool $c" || continue
      binary=$gda; [[ $c == stepped_pool ]] && binary=$dc
      timeout 25 compute-sanitizer --tool $tool --error-exitcode 9 "$binary" "$c" > "$R/san_${tool}_$c.log" 2>&1
      echo "--- $tool $c rc=$? $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/san_${tool}_$c.log" | head -1) $(ab_el)"
    done
  done
}

# $R into $OUT/NAME.tgz (the device tool brings back at most eight files).
ab_pack() { (cd "$OUT" && tar czf "$(basename "$R").tgz" "$(basename "$R")" && rm -rf "$(basename "$R")"); }
