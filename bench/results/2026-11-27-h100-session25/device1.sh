#!/usr/bin/env bash
# Call 1: TFLOP/s against the tile count (the last wave's idle SMs), ours and cuDNN, bf16 forward non-causal.
set -x
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv
B=build/cli/apps/flashcute
[ -x $B ] || B=$(find build/cli -name flashcute -type f | head -1)
timeout 500 python3 bench/wave_sweep.py --bin $B --rounds 2 --seconds 1.2 \
  --case 128:8192:2x16,1x31,1x33,1x34 \
  --case 128:16384:1x16,1x32,1x33 \
  --case 128:2048:8x16,1x132 \
  --case 128:512:32x16,1x528 \
  --case 256:4096:4x8,1x33 \
  --out $OUT/wave-sweep.md 2>&1 | tee $OUT/wave-sweep.log
