#!/usr/bin/env bash
# Telemetry is a compile-time policy of the submit path (nic/telemetry_policy.h): a put under a
# bare ordering must compile to exactly what a build without telemetry compiles it to, and one
# under gda::counted must carry the hooks. Compares the PTX of policy_kernels.cu's kernels (the
# same PTX gives the same SASS from the same ptxas) and, where cuobjdump is on PATH, their SASS.
# usage: telemetry_policy_ptx_test.sh NVCC INCLUDE_DIR SOURCE
set -euo pipefail
nvcc=$1 include=$2 source=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(-std=c++17 --expt-relaxed-constexpr -O2 -DNDEBUG -DDISSECT_HAVE_CUDA=1 -I"$include"
       --generate-code=arch=compute_90,code=compute_90)
"$nvcc" "${flags[@]}" -ptx "$source" -o "$work/in.ptx"
"$nvcc" "${flags[@]}" -DDISSECT_TELEMETRY_COMPILED_OUT -ptx "$source" -o "$work/out.ptx"

# The body of the .entry whose name contains $2, from PTX file $1.
entry() {
  awk -v want="$2" '/\.entry/ && index($0, want) { on = 1 } on { print } on && /^}/ { exit }' "$1" |
    sed 1d  # the .entry line names the kernel; the body is what must match
}

failures=0
for kernel in put_value post_writes owned_put; do
  bare_in=$(entry "$work/in.ptx" "bare_$kernel")
  bare_out=$(entry "$work/out.ptx" "bare_$kernel")
  counted_in=$(entry "$work/in.ptx" "counted_$kernel")
  if [[ -z "$bare_in" || -z "$counted_in" ]]; then
    echo "FAIL $kernel: kernel not found in the PTX"; failures=$((failures + 1)); continue
  fi
  if [[ "$bare_in" != "$bare_out" ]]; then
    echo "FAIL $kernel: the bare ordering's PTX differs from a build without telemetry"
    diff <(echo "$bare_in") <(echo "$bare_out") | head -20 || true
    failures=$((failures + 1))
  fi
  if [[ "$counted_in" == "$bare_in" ]]; then
    echo "FAIL $kernel: gda::counted compiled no hook in (its PTX equals the bare ordering's)"
    failures=$((failures + 1))
  fi
  echo "$kernel: bare $(echo "$bare_in" | wc -l) PTX lines (= compiled out), counted $(echo "$counted_in" | wc -l)"
done

if command -v cuobjdump > /dev/null; then
  "$nvcc" "${flags[@]/code=compute_90/code=sm_90}" -cubin "$source" -o "$work/in.cubin"
  "$nvcc" "${flags[@]/code=compute_90/code=sm_90}" -DDISSECT_TELEMETRY_COMPILED_OUT -cubin "$source" -o "$work/out.cubin"
  # Column widths follow the widest line of the whole file: squeezed before comparing.
  sass() { cuobjdump -sass "$1" | awk -v want="$2" '/Function :/ { on = index($0, want) > 0 } on' | tr -s ' '; }
  for kernel in put_value post_writes owned_put; do
    if [[ "$(sass "$work/in.cubin" "bare_$kernel")" != "$(sass "$work/out.cubin" "bare_$kernel")" ]]; then
      echo "FAIL $kernel: the bare ordering's SASS differs from a build without telemetry"
      failures=$((failures + 1))
    fi
  done
  echo "SASS compared with $(command -v cuobjdump)"
else
  echo "cuobjdump not on PATH: PTX compared (SASS follows from it)"
fi
exit $((failures > 0))
