#!/usr/bin/env bash
# Session 27, call 1: `sum` (branch sm90-sum-check head 3249332, d 128 bf16 build with
# FLASHCUTE_SM90_FWD_SUM_CHECK=1: interior blocks test each thread's row sums of p; slow path moves a
# reference on any growth of the block's max p) against main's kernels (`lmc`, 49e8665): the fp64
# checks (10 default + 17 aimed at the speculative paths), then an A/B at the steady state.
O=${OUT:-gpu-out}; mkdir -p $O
S=bench/results/2026-11-27-h100-session23
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,power.limit --format=csv > $O/gpu.txt
mkdir -p ab-bin/lmc ab-bin/sum
cp build/lmc/apps/flashcute ab-bin/lmc/; cp build/sum27/flashcute ab-bin/sum/
DIMS=128 timeout 100 bash $S/checks.sh ab-bin/sum/flashcute > $O/checks-sum.txt 2>&1; echo "checks rc=$?" >> $O/checks-sum.txt
DIMS=128 timeout 120 bash $S/checks-spec.sh ab-bin/sum/flashcute > $O/checks-spec-sum.txt 2>&1; echo "checks-spec rc=$?" >> $O/checks-spec-sum.txt
tail -1 $O/checks-sum.txt; tail -1 $O/checks-spec-sum.txt; grep -c '^rc=0' $O/checks-sum.txt $O/checks-spec-sum.txt
grep -h '^rc=' $O/checks-sum.txt $O/checks-spec-sum.txt | grep -v '^rc=0' | cut -c1-220 | head -5
timeout 300 python3 bench/ab_steady.py --bin-dir ab-bin --variants lmc,sum \
  --case 128:yes:8192 --case 128:yes:2048 --case 128:yes:512 --case 128:no:512 --case 128:no:2048 \
  --case 128:no:8192 --case 128:no:16384 --iters 1000 --rounds 2 --out $O/ab-sum.md > $O/ab-sum.log 2>&1
echo "ab rc=$?"; tail -9 $O/ab-sum.md; tail -3 $O/ab-sum.log
