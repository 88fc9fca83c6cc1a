#!/usr/bin/env bash
# Stop 44 call 2: H = c221244 (stop 43's last), N = 3396ab6 (the deepest backlog noted at a window's
# retirement; QpContext kept a multiple of 16 B; gpu-rate's posting rate). The latency of H and N
# interleaved, the one-QP ceilings; on N the submitters' own pace on one QP: the cooperative rows
# with a send queue deeper than the run (32,768 WQEBBs, every message posted without waiting for
# room), beside the same rows at the default depth. N's GPU tier first.
set -u
source scripts/device_ab.sh
ab_start ${BUDGET:-300} c2
ab_tree h .ab/h.tgz 5 > /dev/null &
ab_tier n .ab/n.tgz 11 300
wait
tail -qn1 $R/h_build.log
grep -E "tests passed|tests failed|Failed|\*\*\*Failed|Not Run|Timeout" $R/ctest_gpu.log | head -20
ab_sanitize backlog_runs
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
R32="--qps 1 --ctas 1 --batch 32 --sharing cooperative"
AB_TIMEOUT=25 ab_run n w32 gpu-rate --threads 32 $R32 --runs 3
AB_TIMEOUT=25 ab_run n w32_deep gpu-rate --threads 32 $R32 --runs 5 --sq-depth 32768 --messages 896
AB_TIMEOUT=25 ab_run n w256 gpu-rate --threads 256 $R32 --runs 3
AB_TIMEOUT=25 ab_run n w256_deep gpu-rate --threads 256 $R32 --runs 5 --sq-depth 32768 --messages 112
AB_TIMEOUT=25 ab_run n t1_deep gpu-rate --threads 1 --qps 1 --ctas 1 --batch 16 --runs 5 --sq-depth 32768 --messages 28672
for r in w32 w32_deep w256 w256_deep t1_deep; do
  grep -hE "message rate|posting rate|model ceiling|deepest" $R/n_$r.txt | cut -c1-160
done
echo "=== done $(ab_el)"
ab_pack
