#!/usr/bin/env bash
# Session 28, call 10: the landed d 128 bf16 kernels (`land28`: a CLI build of dc7d240) beside cuDNN
# (SDPA) at the steady state, row by row (bench/ab_steady.py --peer sdpa_cudnn; BENCHMARKING.md's
# shapes), as a second reading of the grid's ours / cuDNN with a different method.
O=${OUT:-gpu-out}; mkdir -p $O
mkdir -p abp/land28; cp build/land28/apps/flashcute abp/land28/
timeout 420 python3 bench/ab_steady.py --bin-dir abp --variants land28 --peer sdpa_cudnn \
  --case 128:no:1024 --case 128:no:2048 --case 128:no:4096 --case 128:no:8192 --case 128:no:16384 \
  --case 128:yes:2048 --case 128:yes:4096 --case 128:yes:8192 --case 128:no:512 \
  --iters 500 --rounds 2 --out $O/ab-vs-cudnn.md > $O/ab-vs-cudnn.log 2>&1
echo "ab rc=$?"; tail -11 $O/ab-vs-cudnn.md
