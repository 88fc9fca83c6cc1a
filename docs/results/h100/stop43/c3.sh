#!/usr/bin/env bash
# Stop 43 call 3: H = 5cf156d (stop 42's last), L = 9007bfc (the landing tree: express passes of up to
# four windows of a backlog; the lone path's read as at H, the paced kernel's SASS identical to H's).
# L's GPU tier and backlog_runs under compute-sanitizer, then as the budget allows: the fast and
# cx7-ib latency, the ceilings, gpu-rate's one-warp row on H and L interleaved; host-nic-ceiling;
# gpu-rate --sweep --quick on L.
set -u
source scripts/device_ab.sh
ab_start ${BUDGET:-320} c3
ab_tree h .ab/h.tgz 5 > /dev/null &
ab_tier l .ab/l.tgz 11 300
wait
tail -qn1 $R/h_build.log
grep -E "tests passed|tests failed|Failed|\*\*\*Failed|Not Run|Timeout" $R/ctest_gpu.log | head -20
grep -E "backlog_runs" $R/ctest_gpu.log | head -2
ab_sanitize backlog_runs
for round in 1 2; do
  for t in h l; do
    AB_TIMEOUT=30 ab_run $t glf_$round gpu-latency --quick --runs 3 --nic-profile fast
    grep -hE "^gpu-latency +(inline|pointer) +put\+completion us" $R/${t}_glf_$round.txt | cut -c1-110
  done
  for t in h l; do
    AB_TIMEOUT=40 ab_run $t glc_$round gpu-latency --quick --runs 3 --nic-profile cx7-ib
    grep -hE "^gpu-latency +(inline|pointer) +put\+completion us" $R/${t}_glc_$round.txt | cut -c1-110
  done
  for t in h l; do
    ab_run $t c1_$round nic-ceiling --qps 1 --sizes 8 --runs 3 --rounds 4
    grep -hE "message rate" $R/${t}_c1_$round.txt | head -1 | cut -c1-120
    ab_run $t c64_$round nic-ceiling --qps 64 --sizes 8 --runs 1 --rounds 4
    grep -hE "message rate" $R/${t}_c64_$round.txt | head -1 | cut -c1-120
  done
done
for t in h l; do
  AB_TIMEOUT=25 ab_run $t r_32 gpu-rate --threads 32 --qps 1 --ctas 1 --batch 32 --sharing cooperative --runs 3
  grep -hE "message rate|model ceiling" $R/${t}_r_32.txt | cut -c1-140
done
AB_TIMEOUT=60 ab_run l sweep gpu-rate --sweep --quick
grep -cE "timed out" $R/l_sweep.txt
grep -E "message rate|bottleneck" $R/l_sweep.txt | head -40 | cut -c1-150
for t in h l; do
  AB_TIMEOUT=30 ab_run $t hc host-nic-ceiling --engine-threads 1,4 --qps 1,4 --runs 3
  grep -hE "message rate" $R/${t}_hc.txt | cut -c1-120
done
echo "=== done $(ab_el)"
ab_pack
