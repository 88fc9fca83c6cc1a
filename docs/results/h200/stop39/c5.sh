#!/usr/bin/env bash
# Stop 39 call 5: the landing code (1be1df0: gpu-connection-scaling's 32 slots a QP and its
# submitters' waiting time). Its GPU tier, then Figure 10a to 32,768 QPs and Figure 10b on cx7-ib.
set -u
source scripts/device_ab.sh
ab_start 440 c5
ab_tier g .ab/g2.tgz 15 300
grep -E "tests passed|tests failed|Failed|\*\*\*Failed|Not Run|Timeout" $R/ctest_gpu.log | head -20
grep -E "connection_scaling" $R/ctest_gpu.log | head -4
AB_TIMEOUT=150 ab_run g f10a gpu-connection-scaling --direction send,both --qps 64,1024,4096,32768 --visit 32 --runs 1 --nic-profile cx7-ib
grep -E "message rate|model ceiling|waiting" $R/g_f10a.txt | cut -c1-150
grep -h '"bottleneck"' $R/g_f10a.json | cut -c1-200
AB_TIMEOUT=80 ab_run g f10a_reuse gpu-connection-scaling --direction both --qps 64,32768 --visit 8192 --runs 1 --nic-profile cx7-ib
grep -E "message rate|model ceiling|waiting" $R/g_f10a_reuse.txt | cut -c1-150
AB_TIMEOUT=80 ab_run g f10b gpu-connection-scaling --transport rc,dc --nic-profile cx7-ib --runs 1
grep -E "message rate|model ceiling|waiting" $R/g_f10b.txt | cut -c1-150
grep -h '"bottleneck"' $R/g_f10b.json | cut -c1-200
echo "=== done $(ab_el)"
ab_pack
