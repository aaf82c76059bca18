#!/usr/bin/env bash
# d 256 A/B of the cluster kernel: with a workspace (the dispatch the grid runs: dynamic persistent up to
# 4k keys, the non-persistent kernel beyond) and without (cl_nows: the cluster kernel at every length).
cd "$(dirname "$0")/../../.."
timeout 560 python3 bench/ab_steady.py --bin-dir ab-bin --variants base,cl,cl_nows --case 256:no:8192 --case 256:no:16384 \
  --case 256:no:4096 --case 256:no:2048 --iters 1000 --rounds 3 --peer sdpa_cudnn --out $OUT/ab-cluster-d256.md > $OUT/ab-cluster-d256.log 2>&1
tail -30 $OUT/ab-cluster-d256.md
