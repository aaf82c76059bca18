#!/usr/bin/env bash
# Session 26, call 2: `split` (branch sm90-split-s: the speculative-exp loop's S = Q K^T as two
# wgmma batches of 64 keys, the exps of the first half while the second is on the tensor cores; d 128
# build, on top of lmc) against base (main) and lmc: fp64 checks, then an A/B at the steady state.
O=${OUT:-gpu-out}; mkdir -p $O
S=bench/results/2026-11-27-h100-session23
mkdir -p ab-bin/base ab-bin/lmc ab-bin/split
cp build/cli/apps/flashcute ab-bin/base/; cp build/lmcm/flashcute ab-bin/lmc/; cp build/splitbin/flashcute ab-bin/split/
DIMS=128 timeout 100 bash $S/checks.sh ab-bin/split/flashcute > $O/checks-split.txt 2>&1; echo "checks rc=$?" >> $O/checks-split.txt
DIMS=128 timeout 120 bash $S/checks-spec.sh ab-bin/split/flashcute > $O/checks-spec-split.txt 2>&1; echo "checks-spec rc=$?" >> $O/checks-spec-split.txt
tail -1 $O/checks-split.txt; tail -1 $O/checks-spec-split.txt; grep -c '^rc=0' $O/checks-split.txt $O/checks-spec-split.txt
grep -h '^rc=' $O/checks-split.txt $O/checks-spec-split.txt | grep -v '^rc=0' | cut -c1-220 | head -5
timeout 330 python3 bench/ab_steady.py --bin-dir ab-bin --variants base,lmc,split \
  --case 128:no:512 --case 128:yes:512 --case 128:no:2048 --case 128:no:8192 --case 128:yes:8192 --case 128:no:16384 \
  --iters 1000 --rounds 2 --out $O/ab-split.md > $O/ab-split.log 2>&1
echo "ab rc=$?"; tail -9 $O/ab-split.md; tail -3 $O/ab-split.log
