#!/usr/bin/env bash
# Session 28, call 2: the tile prefetch at d 64 and d 256 (`pf`: a bf16 d 64/256 build of the
# prefetch tree) against main's kernels there (`base`: build lmc, 49e8665, whose d 64 and d 256
# SM90 forward kernels are SASS-identical to a41957b's), on the rows that run persistent kernels;
# fp64 checks of pf at d 64 and d 256.
O=${OUT:-gpu-out}; mkdir -p $O
S=bench/results/2026-11-27-h100-session23
mkdir -p ab2/base ab2/pf
cp build/lmc/apps/flashcute ab2/base/; cp build/pf-64-256/apps/flashcute ab2/pf/
DIMS="64 256" timeout 150 bash $S/checks.sh ab2/pf/flashcute > $O/checks-pf-d64-d256.txt 2>&1; echo "checks rc=$?" >> $O/checks-pf-d64-d256.txt
tail -1 $O/checks-pf-d64-d256.txt; grep -c '^rc=0' $O/checks-pf-d64-d256.txt
grep -h '^rc=' $O/checks-pf-d64-d256.txt | grep -v '^rc=0' | cut -c1-200 | head -5
timeout 380 python3 bench/ab_steady.py --bin-dir ab2 --variants base,pf \
  --case 64:no:512 --case 64:no:1024 --case 64:no:2048 --case 64:yes:512 --case 64:yes:2048 --case 64:yes:8192 \
  --case 256:no:512 --case 256:no:2048 --case 256:no:4096 --case 256:yes:512 --case 256:yes:2048 --case 256:yes:4096 \
  --iters 1000 --rounds 2 --out $O/ab-pf-d64-d256.md > $O/ab-pf-d64-d256.log 2>&1
echo "ab rc=$?"; tail -14 $O/ab-pf-d64-d256.md
# The dynamic persistent kernel on the long d 128 rows, both with the prefetch (`pfdyn`: the pf tree
# built with FLASHCUTE_SM90_FWD_DYNAMIC=1, every problem given a workspace on the persistent kernel;
# `pf`: the rows' limit, 4k keys).
mkdir -p ab3/pf ab3/pfdyn
cp build/pf/apps/flashcute ab3/pf/; cp build/pfdyn/apps/flashcute ab3/pfdyn/
timeout 150 python3 bench/ab_steady.py --bin-dir ab3 --variants pf,pfdyn \
  --case 128:no:8192 --case 128:yes:8192 --case 128:no:16384 --case 128:yes:16384 \
  --iters 500 --rounds 2 --out $O/ab-pfdyn.md > $O/ab-pfdyn.log 2>&1
echo "ab rc=$?"; tail -6 $O/ab-pfdyn.md
