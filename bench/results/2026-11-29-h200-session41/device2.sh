#!/usr/bin/env bash
# Session 41, call 2 (H200; call 1's machine and its build/gpu): three d 128 and three d 64 forward
# grids (scripts/gpu-grid), ours beside cuDNN, FA2 and FlexAttention, bf16 and fp16.
O=$OUT; OUT=$O GRID_SPECS="128:run1 128:run2 128:run3 64:run1 64:run2 64:run3" GRID_TIMEOUT=100 timeout 560 scripts/gpu-grid 2>&1 | tail -n 30
