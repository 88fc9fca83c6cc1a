#!/usr/bin/env bash
# Stop 40 call 1: H = 45dbbed (stop 39's last), N = 1ebf501 (a profile scheduling quantum, cx7-ib 32; the 10 % waiting rule; gda::has_room).
# N's GPU tier; Figure 10a both at 4,096 and 32,768 QPs on H and N (A's lookups and misses per
# message: does the engine serve a backlog two windows a visit?); N's long reuse; the fast path.
set -u
source scripts/device_ab.sh
ab_start 460 c1
ab_tree h .ab/h.tgz 5 > /dev/null &
ab_tier n .ab/n.tgz 11 330
wait
tail -qn1 $R/h_build.log
grep -E "tests passed|tests failed|Failed|\*\*\*Failed|Not Run|Timeout" $R/ctest_gpu.log | head -20
for t in h n; do
  AB_TIMEOUT=100 ab_run $t both gpu-connection-scaling --direction both --qps 32768 --visit 32 --runs 1 --nic-profile cx7-ib
  grep -E "message rate|misses per|lookups per|model ceiling|waiting" $R/${t}_both.txt | cut -c24-150
done
for t in h n; do
  ab_run $t glf_$RANDOM gpu-latency --quick --runs 3 --nic-profile fast
  grep -hE "^gpu-latency +(inline|pointer) +put\+completion us" $(ls -t $R/${t}_glf_*.txt | head -1) | cut -c1-110
done
for t in h n; do
  ab_run $t c64 nic-ceiling --qps 64 --sizes 8 --runs 1 --rounds 4
  grep -hE "message rate" $R/${t}_c64.txt | head -1 | cut -c1-120
done
AB_TIMEOUT=60 ab_run n reuse gpu-connection-scaling --direction both --qps 1024,4096 --visit 8192 --runs 1 --nic-profile cx7-ib
grep -E "message rate|misses per|model ceiling|waiting" $R/n_reuse.txt | cut -c24-150
AB_TIMEOUT=60 ab_run n send1k gpu-connection-scaling --direction send --qps 32768 --submitters 1024 --visit 32 --runs 1 --nic-profile cx7-ib
grep -E "message rate|misses per|model ceiling|waiting" $R/n_send1k.txt | cut -c24-150
echo "=== done $(ab_el)"
ab_pack
