#!/usr/bin/env bash
# Stop 44 call 1: H = c221244 (stop 43's last), N = 957c1b8 (the NIC model's deepest backlog, noted
# at a window's retirement, and gpu-rate's bottleneck from it). N's GPU tier and backlog_runs under
# compute-sanitizer; the latency of H and N interleaved (QpContext grew by 8 B); gpu-rate's one-warp
# row with its deepest backlog, a control that starves the engine (one engine warp for 64 QPs), and
# gpu-rate --sweep --quick on N; the ceilings on both.
set -u
source scripts/device_ab.sh
ab_start ${BUDGET:-540} c1
ab_tree h .ab/h.tgz 5 > /dev/null &
ab_tier n .ab/n.tgz 11 300
wait
tail -qn1 $R/h_build.log
grep -E "tests passed|tests failed|Failed|\*\*\*Failed|Not Run|Timeout" $R/ctest_gpu.log | head -20
ab_sanitize backlog_runs
for t in n h; do
  AB_TIMEOUT=25 ab_run $t r_32 gpu-rate --threads 32 --qps 1 --ctas 1 --batch 32 --sharing cooperative --runs 3
  grep -hE "message rate|model ceiling|deepest|bottleneck" $R/${t}_r_32.txt | cut -c1-200
done
AB_TIMEOUT=40 ab_run n starved gpu-rate --threads 64 --qps 64 --ctas 64 --batch 16 --engine-ctas 1 --engine-warps 1 --runs 1
grep -hE "message rate|model ceiling|deepest|bottleneck" $R/n_starved.txt | cut -c1-200
AB_TIMEOUT=90 ab_run n sweep gpu-rate --sweep --quick
grep -cE "timed out" $R/n_sweep.txt
grep -E "message rate|deepest|bottleneck" $R/n_sweep.txt | head -60 | cut -c1-200
for round in 1 2; do
  for t in h n; do
    AB_TIMEOUT=30 ab_run $t glf_$round gpu-latency --quick --runs 3 --nic-profile fast
    grep -hE "^gpu-latency +(inline|pointer) +put\+completion us" $R/${t}_glf_$round.txt | cut -c1-110
  done
  for t in h n; do
    AB_TIMEOUT=40 ab_run $t glc_$round gpu-latency --quick --runs 3 --nic-profile cx7-ib
    grep -hE "^gpu-latency +(inline|pointer) +put\+completion us" $R/${t}_glc_$round.txt | cut -c1-110
  done
  for t in h n; do
    ab_run $t c1_$round nic-ceiling --qps 1 --sizes 8 --runs 3 --rounds 4
    grep -hE "message rate" $R/${t}_c1_$round.txt | head -1 | cut -c1-120
  done
done
echo "=== done $(ab_el)"
ab_pack
