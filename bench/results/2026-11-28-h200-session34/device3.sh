#!/usr/bin/env bash
# Session 34, calls 3 and 4 (the H200 machine and build tree of call 2): two more forward grids per
# head dim, so that each row is the median of three runs (call 3: d 256 run1, d 128 run2, d 64 run2,
# d 256 run2; call 4: run3 of d 128, 64 and 256).
GRID_SPECS="256:run1 128:run2 64:run2 256:run2" GRID_TIMEOUT=150 timeout 560 scripts/gpu-grid   # call 3
# GRID_SPECS="128:run3 64:run3 256:run3" GRID_TIMEOUT=150 timeout 500 scripts/gpu-grid         # call 4
