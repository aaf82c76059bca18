#!/usr/bin/env bash
# Session 42, call 2 (H200; call 1's machine and build), as run: three d 256 grids and one each of
# d 128 and d 64 (scripts/gpu-grid), ours beside cuDNN, FA2 and FlexAttention, bf16 and fp16.
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader > $OUT/gpu.txt
OUT=$OUT GRID_SPECS="256:run1 256:run2 256:run3 128:run1 64:run1" GRID_TIMEOUT=100 timeout 550 scripts/gpu-grid 2>&1 | tail -n 30
