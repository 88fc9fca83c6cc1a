#!/usr/bin/env bash
# Stop 39 call 1: what bounds the paced engine's rates. HEAD (e1b3f78) alone: nic-ceiling and
# gpu-connection-scaling under fast and cx7-ib, side by side.
set -u
source scripts/device_ab.sh
ab_start 400 c1
ab_tree h .ab/h.tgz 16
for p in fast cx7-ib; do
  ab_run h nc_$p nic-ceiling --qps 1,8,64 --sizes 8 --runs 1 --rounds 3 --nic-profile $p
  grep -E "message rate" $R/h_nc_$p.txt | cut -c1-130
done
for p in cx7-ib fast; do
  AB_TIMEOUT=80 ab_run h cs_$p gpu-connection-scaling --direction send --qps 64,1024 --visit 32,256 --runs 1 --nic-profile $p
  grep -E "Mmsg/s" $R/h_cs_$p.txt | cut -c1-150
  grep -h bottleneck $R/h_cs_$p.json | head -4
done
echo "=== done $(ab_el)"
ab_pack
