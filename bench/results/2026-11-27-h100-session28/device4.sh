#!/usr/bin/env bash
# Session 28, call 3: `lnd` (main with FLASHCUTE_SM90_FWD_RECOMPUTE_OPAQUE=1, the new default: the
# speculative recompute's coordinates from an opaque thread index made inside its branch; no tile
# prefetch) against main's kernels (`base`: a41957b), bf16 and fp16 d 128 builds: fp64 checks, A/B
# over the d 128 rows of the grid. One tar back.
O=${OUT:-gpu-out}; mkdir -p $O/r
S=bench/results/2026-11-27-h100-session23
mkdir -p ab-bin/base ab-bin/lnd ab16/base ab16/lnd
cp build/land27/apps/flashcute ab-bin/base/; cp build/lnd28/apps/flashcute ab-bin/lnd/
cp build/fp16-on/apps/flashcute ab16/base/; cp build/lnd28-fp16/apps/flashcute ab16/lnd/
DIMS=128 timeout 100 bash $S/checks.sh ab-bin/lnd/flashcute > $O/r/checks-lnd.txt 2>&1; echo "checks rc=$?" >> $O/r/checks-lnd.txt
DIMS=128 timeout 110 bash $S/checks-spec.sh ab-bin/lnd/flashcute > $O/r/checks-spec-lnd.txt 2>&1; echo "checks-spec rc=$?" >> $O/r/checks-spec-lnd.txt
tail -1 $O/r/checks-lnd.txt; tail -1 $O/r/checks-spec-lnd.txt
grep -c '^rc=0' $O/r/checks-lnd.txt $O/r/checks-spec-lnd.txt
grep -h '^rc=' $O/r/checks-*.txt | grep -v '^rc=0' | cut -c1-200 | head -5
timeout 330 python3 bench/ab_steady.py --bin-dir ab-bin --variants base,lnd \
  --case 128:no:512 --case 128:no:1024 --case 128:no:2048 --case 128:no:4096 --case 128:no:8192 --case 128:no:16384 \
  --case 128:yes:512 --case 128:yes:1024 --case 128:yes:2048 --case 128:yes:4096 --case 128:yes:8192 --case 128:yes:16384 \
  --iters 600 --rounds 3 --out $O/r/ab-lnd.md > $O/r/ab-lnd.log 2>&1
echo "ab rc=$?"; tail -13 $O/r/ab-lnd.md
timeout 140 python3 bench/ab_steady.py --bin-dir ab16 --variants base,lnd --dtype fp16 \
  --case 128:no:2048 --case 128:no:8192 --case 128:yes:2048 --case 128:yes:8192 \
  --iters 600 --rounds 2 --out $O/r/ab-lnd-fp16.md > $O/r/ab-lnd-fp16.log 2>&1
echo "ab fp16 rc=$?"; tail -5 $O/r/ab-lnd-fp16.md
tar czf $O/r.tgz -C $O r && rm -rf $O/r
