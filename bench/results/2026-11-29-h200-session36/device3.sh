#!/usr/bin/env bash
# Session 36, call 3 (H200): a d 64 build (sm_90a, bf16 and fp16, the Python module) by
# scripts/gpu-check, then two d 64 forward grids by scripts/gpu-grid (ours beside cuDNN, FA2, Flex).
O=${OUT:-gpu-out}
t0=$SECONDS
OUT=$O/b FLASHCUTE_STEPS="build" FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a -DFLASHCUTE_HEAD_DIMS=64 -DFLASHCUTE_BUILD_TESTS=OFF" \
  timeout 300 scripts/gpu-check > $O/build-console.txt 2>&1
echo "build rc=$? ($((SECONDS - t0)) s); ptxas reports: $(grep -c 'spill stores' $O/b/build.log), with spills: $(grep 'spill stores' $O/b/build.log | grep -vc ' 0 bytes spill stores')"
rm -rf $O/b
t0=$SECONDS
GRID_SPECS="64:run1 64:run2" GRID_TIMEOUT=110 OUT=$O timeout 240 scripts/gpu-grid > $O/grid.log 2>&1
echo "grid rc=$? ($((SECONDS - t0)) s)"; tail -6 $O/grid.log
