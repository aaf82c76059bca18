#!/usr/bin/env bash
# Session 23, call 2: the speculative exps (ab-bin/spec) against main's kernels (ab-bin/base): fp64
# checks of every path, then bench/ab_steady.py.
O=${OUT:-gpu-out}; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv > $O/gpu2.txt
DIMS="${CHECK_DIMS:-128}" bash bench/results/2026-11-27-h100-session23/checks-spec.sh ab-bin/spec/flashcute > $O/checks-spec.txt 2>&1; echo "checks-spec rc=$?"
grep -c "^rc=0" $O/checks-spec.txt; grep -v "^rc=0" $O/checks-spec.txt | head -5
bash bench/results/2026-11-27-h100-session23/checks.sh ab-bin/spec/flashcute > $O/checks.txt 2>&1; echo "checks rc=$?"
grep -c "^rc=0" $O/checks.txt; grep -v "^rc=0" $O/checks.txt | head -5
python3 bench/ab_steady.py --bin-dir ab-bin --variants base,spec $AB_CASES --iters ${AB_ITERS:-1000} --rounds 2 --out $O/ab-spec.md > $O/ab-spec.log 2>&1
echo "ab rc=$?"; cat $O/ab-spec.md
