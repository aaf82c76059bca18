#!/usr/bin/env bash
# Session 27, call 3: `d64sum` (branch sm90-d64-sum: spec_exp on every d 64 kernel with the k-outer
# recompute, plus the sum check; d 64 bf16 build with -DFLASHCUTE_SM90_FWD_SPEC_EXP=1) against main's
# d 64 kernels (`lmc`, 49e8665; the sum check's landing left d 64 unchanged): fp64 checks (10 default +
# 17 targeted at d 64), then an A/B at the steady state.
O=${OUT:-gpu-out}; mkdir -p $O
S=bench/results/2026-11-27-h100-session23
mkdir -p ab-bin/lmc ab-bin/d64sum
cp build/lmc/apps/flashcute ab-bin/lmc/; cp build/d64sum/flashcute ab-bin/d64sum/
DIMS=64 timeout 100 bash $S/checks.sh ab-bin/d64sum/flashcute > $O/checks-d64sum.txt 2>&1; echo "checks rc=$?" >> $O/checks-d64sum.txt
DIMS=64 timeout 120 bash $S/checks-spec.sh ab-bin/d64sum/flashcute > $O/checks-spec-d64sum.txt 2>&1; echo "checks-spec rc=$?" >> $O/checks-spec-d64sum.txt
tail -1 $O/checks-d64sum.txt; tail -1 $O/checks-spec-d64sum.txt; grep -c '^rc=0' $O/checks-d64sum.txt $O/checks-spec-d64sum.txt
grep -h '^rc=' $O/checks-d64sum.txt $O/checks-spec-d64sum.txt | grep -v '^rc=0' | cut -c1-220 | head -5
timeout 330 python3 bench/ab_steady.py --bin-dir ab-bin --variants lmc,d64sum \
  --case 64:no:8192 --case 64:no:16384 --case 64:no:2048 --case 64:no:4096 --case 64:no:512 --case 64:no:1024 \
  --case 64:yes:1024 --case 64:yes:8192 --iters 1000 --rounds 2 --out $O/ab-d64sum.md > $O/ab-d64sum.log 2>&1
echo "ab rc=$?"; tail -10 $O/ab-d64sum.md; tail -3 $O/ab-d64sum.log
