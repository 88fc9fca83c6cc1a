#!/usr/bin/env bash
# Stop 48: the three calls that followed c0.sh on the same warm H100 (source scripts/device_ab.sh;
# /tmp/h-build/dissect is main's, built by c0's GPU tier; M is main + stop 46's lone_overlap.patch).
# c1b: the mended proxy_rate test, gpu-load mini-proxy cx7-ib at send queues of 64 and 16.
ab_start 300 c1b
timeout 95 python3 tests/gpu/load/load_gpu_test.py /tmp/h-build/dissect proxy_rate > $R/h_proxy_rate_test.txt 2>&1
for d in 64 16; do
  AB_TIMEOUT=80 ab_run h pl_$d gpu-load --path mini-proxy --nic-profile cx7-ib --background 0,64 --iterations 1000 \
    --runs 2 --ramp-ms 50 --probe-ms 300 --worker-sq-depth $d
done
ab_pack
# c2: depth 32 with three runs and a 16-CTA point; tree M; cx7-ib RC/DC lone rows of H and M
# interleaved, two rounds; fast.
ab_start 330 c2
AB_TIMEOUT=60 ab_run h pl_32r3 gpu-load --path mini-proxy --nic-profile cx7-ib --background 0,16,64 --iterations 1000 \
  --runs 3 --ramp-ms 50 --probe-ms 300 --worker-sq-depth 32
ab_tree m .ab/l.tgz 16 > /dev/null
for round in 1 2; do for t in h m; do
  AB_TIMEOUT=30 ab_run $t dc_$round gpu-latency --quick --runs 3 --transport dc --av compact --nic-profile cx7-ib
done; done
for t in h m; do AB_TIMEOUT=20 ab_run $t glf gpu-latency --quick --runs 3 --nic-profile fast; done
ab_pack
# c3: the depth sweep at 64 CTAs only (8 and 24/48 are refused by name: below the batch, not a
# power of two), and fast at depth 32 as the control.
ab_start 120 c3
for d in 8 16 24 32 48 64 256; do
  AB_TIMEOUT=30 ab_run h sw_$d gpu-load --path mini-proxy --nic-profile cx7-ib --background 64 --iterations 1000 \
    --runs 2 --ramp-ms 50 --probe-ms 300 --worker-sq-depth $d
done
AB_TIMEOUT=30 ab_run h swf_32 gpu-load --path mini-proxy --nic-profile fast --background 64 --iterations 1000 --runs 2 \
  --ramp-ms 50 --probe-ms 300 --worker-sq-depth 32
ab_pack
