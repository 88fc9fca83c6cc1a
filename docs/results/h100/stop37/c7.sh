#!/usr/bin/env bash
# Stop 37 call 7: stop 36's code (A = baf8055) with its GPU tier first, then gpu-rate --sweep --quick,
# as calls 2 and 4 ran the landing code: does the (†) row fail there too?
set -u
START=$(date +%s)
el() { echo "[$(( $(date +%s) - START )) s]"; }
R=$OUT/c7; mkdir -p $R
cp -r .deps/usr/. /usr/ 2>/dev/null
mkdir -p /tmp/a && tar -xzf .ab/a.tgz -C /tmp/a && cp -r .deps build-deps /tmp/a/
(cd /tmp/a && JOBS=16 QUICK=1 STAGES="tests" OUT=$R timeout 200 scripts/device_run.sh > /dev/null 2>&1)
echo "=== A built + GPU tier $(el)"; grep -E "tests passed|tests failed" $R/ctest_gpu.log | head -3
timeout 30 /tmp/dissect-build-gpu/dissect gpu-rate --sweep --quick --output $R/a_sweep.json > $R/a_sweep.txt 2>&1
echo "--- a sweep rc=$? $(el) $(grep -c 'timed out' $R/a_sweep.txt) timeouts"; grep -vE "timed out" $R/a_sweep.txt | grep -E "watchdog|what" | head -3 | cut -c1-200
grep -E "doorbell lock per WQE.*message rate" $R/a_sweep.txt | cut -c1-120
echo "=== done $(el)"
cd $OUT && rm -f c7/device_run.log && tar czf c7.tgz c7 && rm -rf c7
