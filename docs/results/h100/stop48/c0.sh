#!/usr/bin/env bash
# Stop 48 minimal call: the GPU tier of main (H) with compute-sanitizer, then gpu-load's mini-proxy
# under cx7-ib with worker send queues of 32 (issue 15).
set -u
source scripts/device_ab.sh
ab_start ${BUDGET:-420} c0
ab_tier h .ab/main.tgz 15 250
tail -5 $R/ctest_gpu.log
ab_sanitize window_order_cx7
AB_TIMEOUT=80 ab_run h pl_32 gpu-load --path mini-proxy --nic-profile cx7-ib --background 0,64 --iterations 1000 --runs 2 --ramp-ms 50 --probe-ms 300 --worker-sq-depth 32
grep -hE "round trip us|background rate|send queue full|in-flight|descriptors per|busy" $R/h_pl_32.txt | grep -v "^exp" | head -24 | cut -c1-140
grep -h "bottleneck" $R/h_pl_32.json | head -4 | cut -c1-300
echo "=== done $(ab_el)"
ab_pack
