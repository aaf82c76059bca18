#!/usr/bin/env bash
# Session 27, call 7: every 8th / 16th exp2 of the d 128 softmax on the FMA pipe (`poly8`, `poly16`:
# d 128 bf16 builds of the landed tree with -DFLASHCUTE_SM90_FWD_D128_POLY_EVERY=8 / 16) against the
# landed kernels (`land27`), now that the block max left the interior blocks' path: the 10 default
# fp64 checks of poly8, then an A/B at the steady state.
O=${OUT:-gpu-out}; mkdir -p $O
S=bench/results/2026-11-27-h100-session23
mkdir -p ab-bin/land27 ab-bin/poly8 ab-bin/poly16
cp build/land27/apps/flashcute ab-bin/land27/; cp build/poly8/apps/flashcute ab-bin/poly8/; cp build/poly16/apps/flashcute ab-bin/poly16/
DIMS=128 timeout 60 bash $S/checks.sh ab-bin/poly8/flashcute > $O/checks-poly8.txt 2>&1; echo "checks rc=$?" >> $O/checks-poly8.txt
tail -1 $O/checks-poly8.txt; grep -c '^rc=0' $O/checks-poly8.txt
timeout 200 python3 bench/ab_steady.py --bin-dir ab-bin --variants land27,poly8,poly16 \
  --case 128:no:8192 --case 128:yes:8192 --case 128:no:2048 --iters 1000 --rounds 2 --out $O/ab-poly.md > $O/ab-poly.log 2>&1
echo "ab rc=$?"; tail -4 $O/ab-poly.md
