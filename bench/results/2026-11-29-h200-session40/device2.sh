#!/usr/bin/env bash
# Session 40, call 2 (H200, call 1's machine still warm: its gpu-check build in build/gpu): three d 128
# forward grids by scripts/gpu-grid (ours beside cuDNN, FA2 and FlexAttention, bf16 and fp16).
O=${OUT:-gpu-out}
ls build/gpu/python > /dev/null || exit 1
t0=$SECONDS
GRID_SPECS="128:run1 128:run2 128:run3" GRID_TIMEOUT=110 OUT=$O timeout 400 scripts/gpu-grid > $O/grid.log 2>&1
echo "grid rc=$? ($((SECONDS - t0)) s)"; cat $O/grid.log
