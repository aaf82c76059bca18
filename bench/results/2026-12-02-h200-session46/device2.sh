#!/usr/bin/env bash
# Session 46, call 2 (H200; call 1's machine and build), as run: one grid each of d 128, 64 and
# 256 (scripts/gpu-grid), ours beside cuDNN, FA2 and FlexAttention, bf16 and fp16.
O=$OUT
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader > $O/gpu.txt
OUT=$O GRID_SPECS="128:run1 64:run1 256:run1" GRID_TIMEOUT=150 timeout 480 scripts/gpu-grid 2>&1 | tail -n 30
