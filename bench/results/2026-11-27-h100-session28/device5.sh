#!/usr/bin/env bash
# Session 28, call 4: scripts/gpu-check (build for sm_90a with every bucket and both dtypes, every GPU
# test, then pytest on the same build tree) on the tree that lands the opaque recompute coordinates
# in the non-persistent kernels (dc7d240).
OUT=$OUT FLASHCUTE_STEPS="build tests pytest" FLASHCUTE_TEST_RUNNER=gtest FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a" \
  timeout 590 scripts/gpu-check > $OUT/gpu-check-console.txt 2>&1
echo "gpu-check rc=$?"; tail -15 $OUT/gpu-check-console.txt
echo "ptxas reports: $(grep -c 'spill stores' $OUT/build.log), with spills: $(grep 'spill stores' $OUT/build.log | grep -vc ' 0 bytes spill stores'), C75xx: $(grep -c 'C75[0-9][0-9]' $OUT/build.log)"
