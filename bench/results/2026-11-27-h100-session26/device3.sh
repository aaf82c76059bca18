#!/usr/bin/env bash
# Session 26, call 3: scripts/gpu-check (build for sm_90a with every bucket and both dtypes, every GPU
# test) on the tree that lands the local max check; call 4 runs pytest on the same build tree.
OUT=$OUT FLASHCUTE_STEPS="build tests" FLASHCUTE_TEST_RUNNER=gtest FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a" \
  timeout 585 scripts/gpu-check > $OUT/gpu-check-console.txt 2>&1
echo "gpu-check rc=$?"; tail -15 $OUT/gpu-check-console.txt
echo "ptxas reports: $(grep -c 'spill stores' $OUT/build.log), with spills: $(grep 'spill stores' $OUT/build.log | grep -vc ' 0 bytes spill stores'), C75xx: $(grep -c 'C75[0-9][0-9]' $OUT/build.log)"
