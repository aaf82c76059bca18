#!/usr/bin/env bash
# Session 23, call 7: spec_exp at d 64 (not landed; the recompute as a k-outer loop, which compiles
# without spills there): targeted fp64 checks, then bench/ab_steady.py against main's kernels.
O=${OUT:-gpu-out}; mkdir -p $O
DIMS=64 timeout 150 bash bench/results/2026-11-27-h100-session23/checks-spec.sh ab-bin/spec64/flashcute > $O/checks-spec-d64.txt 2>&1; echo "checks-spec d64 rc=$? pass=$(grep -c '^rc=0' $O/checks-spec-d64.txt)"; grep -v "^rc=0" $O/checks-spec-d64.txt | cut -c1-200 | head -4
python3 bench/ab_steady.py --bin-dir ab-bin --variants base,spec64 $AB_CASES --iters ${AB_ITERS:-1000} --rounds 2 --out $O/ab-spec-d64.md > $O/ab-spec-d64.log 2>&1
echo "ab rc=$?"; cat $O/ab-spec-d64.md
