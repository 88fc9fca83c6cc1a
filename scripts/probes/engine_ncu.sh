#!/bin/bash
# ncu on the stepped engine (GPU machine, repository root, OUT=dir): the instructions one drain
# (one window of 2n WQEs) executes, for n = 1 and 16, and per SASS line for n = 1, in a scratch
# copy whose stepped_engine test takes n from STEP_N (docs/results/h200/engine/window_profile.md).
set -u
OUT=${OUT:?}; mkdir -p $OUT
[[ -d .deps/usr ]] && cp -r .deps/usr/. /usr/
mkdir -p /tmp/vp && tar cf - --exclude=./build --exclude=./.ab --exclude=./.deps . | tar xf - -C /tmp/vp
sed -i 's/  constexpr uint32_t n = 16;/  const uint32_t n = getenv("STEP_N") ? atoi(getenv("STEP_N")) : 16;/' /tmp/vp/tests/gpu/gda/gda_gpu_test.cu
sed -i '1i #include <cstdlib>' /tmp/vp/tests/gpu/gda/gda_gpu_test.cu
grep -n "STEP_N" /tmp/vp/tests/gpu/gda/gda_gpu_test.cu
cmake -S /tmp/vp -B /tmp/bp -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDISSECT_WITH_CUDA=ON -DDISSECT_CUDA_ARCHS=90 \
  -DDISSECT_WITH_MLX5=OFF -DDISSECT_WITH_MPI=OFF > $OUT/cfg.log 2>&1 && ninja -C /tmp/bp gda_gpu_test > $OUT/build.log 2>&1
echo "built rc=$? $(date +%T)"; tail -3 $OUT/build.log
T=$(find /tmp/bp -name gda_gpu_test -type f -perm -u+x | head -1)
for n in 1 16; do
  STEP_N=$n timeout 60 ncu -k regex:engine_kernel --launch-skip 1 --launch-count 1 --metrics smsp__inst_executed.sum,sm__cycles_elapsed.max,smsp__cycles_active.max,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum $T stepped_engine > $OUT/ncu_metrics_$n.txt 2>&1
  echo "n=$n rc=$?"; grep -E "inst_executed|cycles|requests|shared" $OUT/ncu_metrics_$n.txt | head -12
done
STEP_N=1 timeout 90 ncu -k regex:engine_kernel --launch-skip 1 --launch-count 1 --section SourceCounters --page source --print-source sass --csv $T stepped_engine > $OUT/ncu_source_1.csv 2>&1
echo "source rc=$? $(wc -l < $OUT/ncu_source_1.csv) lines"; head -5 $OUT/ncu_source_1.csv | cut -c1-300
cuobjdump -xelf all $T > /dev/null 2>&1; ls *.cubin 2>/dev/null | head
for c in *.cubin; do nvdisasm --print-line-info $c 2>/dev/null | grep -q engine_kernel && nvdisasm --print-line-info $c > $OUT/engine_lines.sass && break; done
ls -la $OUT; cd $OUT && tar czf prof.tgz *.txt *.csv *.sass 2>/dev/null; ls -la prof.tgz
