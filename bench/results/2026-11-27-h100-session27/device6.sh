#!/usr/bin/env bash
# Session 27, call 6: the sum check in fp16 (d 128 fp16 CLI builds of 52ff907 with
# FLASHCUTE_SM90_FWD_SUM_CHECK=0 (`off`) and =1 (`on`, the landed default)), and bf16 rows call 1 did
# not run (main's kernels `lmc` against the landed build `land27`): A/Bs at the steady state.
O=${OUT:-gpu-out}; mkdir -p $O
mkdir -p ab16/off ab16/on ab-bin/lmc ab-bin/land27
cp build/fp16-off/apps/flashcute ab16/off/; cp build/fp16-on/apps/flashcute ab16/on/
cp build/lmc/apps/flashcute ab-bin/lmc/; cp build/land27/apps/flashcute ab-bin/land27/
timeout 200 python3 bench/ab_steady.py --bin-dir ab16 --variants off,on --dtype fp16 \
  --case 128:no:8192 --case 128:yes:8192 --case 128:no:2048 --case 128:yes:2048 \
  --iters 1000 --rounds 2 --out $O/ab-sum-fp16.md > $O/ab-sum-fp16.log 2>&1
echo "ab fp16 rc=$?"; tail -5 $O/ab-sum-fp16.md
timeout 200 python3 bench/ab_steady.py --bin-dir ab-bin --variants lmc,land27 \
  --case 128:no:1024 --case 128:no:4096 --case 128:yes:1024 --case 128:yes:4096 --case 128:yes:16384 \
  --iters 1000 --rounds 2 --out $O/ab-sum-bf16-more.md > $O/ab-sum-bf16-more.log 2>&1
echo "ab bf16 rc=$?"; tail -6 $O/ab-sum-bf16-more.md
