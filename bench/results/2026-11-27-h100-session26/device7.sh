#!/usr/bin/env bash
# Session 26, call 7: `sum` (branch sm90-sum-check, d 128 build: the speculative loop's interior
# blocks test each thread's row sums of p instead of taking the block max; slow path: recompute S and
# update()) against the landed kernels (`lmc`, 49e8665): the 17 targeted fp64 checks, then an A/B.
O=${OUT:-gpu-out}; mkdir -p $O
S=bench/results/2026-11-27-h100-session23
mkdir -p ab-bin/lmc ab-bin/sum
cp build/lmc/apps/flashcute ab-bin/lmc/; cp build/sumbin/flashcute ab-bin/sum/
DIMS=128 timeout 100 bash $S/checks-spec.sh ab-bin/sum/flashcute > $O/checks-spec-sum.txt 2>&1; echo "checks-spec rc=$?" >> $O/checks-spec-sum.txt
tail -1 $O/checks-spec-sum.txt; grep -c '^rc=0' $O/checks-spec-sum.txt; grep '^rc=' $O/checks-spec-sum.txt | grep -v '^rc=0' | cut -c1-200 | head -3
timeout 110 python3 bench/ab_steady.py --bin-dir ab-bin --variants lmc,sum \
  --case 128:no:8192 --case 128:no:2048 --case 128:yes:8192 --iters 1000 --rounds 2 --out $O/ab-sum.md > $O/ab-sum.log 2>&1
echo "ab rc=$?"; tail -4 $O/ab-sum.md
