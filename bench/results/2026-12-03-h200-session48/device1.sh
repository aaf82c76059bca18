#!/usr/bin/env bash
# Session 48, call 1: does the partial last wave cost the d 128 non-causal persistent rows?
# Tiles 1984 / 2048 / 2112 (15.03 / 15.52 / 16.00 waves of 132 SMs) at 512-4k keys, ours (main's
# kernels, build/vbin/base128) and cuDNN on the same shapes, steady state.
set -u
O=$OUT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
python3 bench/wave_sweep.py --bin build/vbin/base128/flashcute --rounds 2 --seconds 0.8 \
  --extra "--fwd-workspace zeroed" \
  --case 128:512:16x31,16x32,16x33 --case 128:1024:8x31,8x32,8x33 \
  --case 128:2048:4x31,4x32,4x33 --case 128:4096:2x31,2x32,2x33 \
  --out $O/wave-d128.md > $O/wave-d128.log 2>&1
echo rc=$? >> $O/wave-d128.log
tail -20 $O/wave-d128.log
