#!/usr/bin/env bash
# Session 30, call 7: d 64's turns and fast decode together (`s30`: b4a3899's kernels, bf16 d 64 +
# d 128) against c218195's (`base`: build zr, bf16 d 64/128/256), at the steady state (ab_steady,
# 1500 launches, 2 rounds, zeroed workspace). CLI builds made on the CPU machine (build/ab31).
O=${OUT:-gpu-out}; mkdir -p $O/r
for v in base s30; do echo "--fwd-workspace zeroed" > build/ab31/$v/args; done
timeout 240 python3 bench/ab_steady.py --bin-dir build/ab31 --variants base,s30 \
  --case 64:no:512 --case 64:no:1024 --case 64:no:2048 --case 64:no:4096 --case 64:no:8192 \
  --case 64:yes:512 --case 64:yes:1024 --case 64:yes:2048 --iters 1500 --rounds 2 --out $O/r/ab-d64-s30.md > $O/r/ab-d64-s30.log 2>&1
echo "ab rc=$?"; tail -10 $O/r/ab-d64-s30.md
