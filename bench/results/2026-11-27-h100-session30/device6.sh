#!/usr/bin/env bash
# Session 30, call 6 (same machine and build tree as call 5): the second forward grid run.
GRID_SPECS="64:run2 128:run2 256:run2" GRID_TIMEOUT=90 scripts/gpu-grid
