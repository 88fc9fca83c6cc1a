#!/usr/bin/env bash
# Stop 39 call 4: H = e1b3f78 (stop 38) and G = 7df58c7, the landing code (held windows in the host
# engine only; gpu-connection-scaling's 32 slots a QP). G's GPU tier and sanitizers, then H and G
# interleaved: the GPU paths (kernels as H's but for two small changes), the host engine's under
# cx7-ib (gpu-proxy-rate, host-nic-ceiling), and Figure 10 (H's rig wrote 8 slots a QP).
set -u
source scripts/device_ab.sh
ab_start 560 c4
ab_tree h .ab/h.tgz 5 > /dev/null &
ab_tier g .ab/g.tgz 11 330
wait
tail -qn1 $R/h_build.log
grep -E "tests passed|tests failed|Failed|\*\*\*Failed|Not Run|Timeout" $R/ctest_gpu.log | head -20
ab_sanitize window_order_cx7 window_order stepped_engine stepped_pool
for round in 1 2; do for t in h g; do
  ab_run $t glc_$round gpu-latency --quick --runs 3 --nic-profile cx7-ib
  ab_grep $t glc_$round "^gpu-latency +(inline|pointer) +put\+completion us"
  ab_run $t glf_$round gpu-latency --quick --runs 3 --nic-profile fast
  ab_grep $t glf_$round "^gpu-latency +(inline|pointer) +put\+completion us"
done; done
for t in h g h g; do
  ab_run $t c64_$RANDOM nic-ceiling --qps 64 --sizes 8 --runs 1 --rounds 4
  grep -hE "message rate" $(ls -t $R/${t}_c64_*.txt | head -1) | head -1 | cut -c1-120
done
for t in h g; do
  ab_run $t nc nic-ceiling --qps 1 --sizes 8 --rounds 1 --runs 1 --nic-profile cx7-ib
  grep -E "doorbell to CQE us" $R/${t}_nc.txt | head -1 | cut -c1-120
done
for round in 1 2; do for t in h g; do
  AB_TIMEOUT=60 ab_run $t pr_$round gpu-proxy-rate --quick --nic-profile cx7-ib
  echo "    $t B=16 rate: $(grep -E 'B=16 +message rate' $R/${t}_pr_$round.txt | awk '{print $(NF-3)}' | tr '\n' ' ') ceiling: $(grep -E 'B=16 +model ceiling' $R/${t}_pr_$round.txt | awk '{print $(NF-3)}' | tr '\n' ' ')"
  echo "    $t B=1  rate: $(grep -E 'B=1 +message rate' $R/${t}_pr_$round.txt | awk '{print $(NF-3)}' | tr '\n' ' ')"
done; done
for t in h g; do
  ab_run $t hc host-nic-ceiling --engine-threads 1 --qps 1,4 --runs 3 --nic-profile cx7-ib
  grep -E "message rate" $R/${t}_hc.txt | cut -c1-120
done
for t in h g; do
  AB_TIMEOUT=40 ab_run $t cs64 gpu-connection-scaling --direction send --qps 64,1024 --visit 32 --runs 1 --nic-profile cx7-ib
  echo "    $t send 64, 1024: $(grep -E 'message rate' $R/${t}_cs64.txt | awk '{print $(NF-3)}' | tr '\n' ' ')"
done
AB_TIMEOUT=100 ab_run g cs gpu-connection-scaling --quick --nic-profile cx7-ib
grep -E "message rate|model ceiling" $R/g_cs.txt | cut -c1-140
AB_TIMEOUT=60 ab_run g f10b gpu-connection-scaling --quick --transport rc,dc --nic-profile cx7-ib
grep -E "message rate|model ceiling" $R/g_f10b.txt | cut -c1-140
echo "=== done $(ab_el)"
ab_pack
