#!/usr/bin/env bash
# Session 29, call 10: scripts/gpu-check's build and GPU tests (sm_90a, every bucket, both dtypes) on
# the tree that turns the fast tile decode on (FLASHCUTE_SM90_FWD_FAST_DECODE=1 by default).
OUT=$OUT FLASHCUTE_STEPS="build tests" FLASHCUTE_TEST_RUNNER=gtest FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a" \
  timeout 590 scripts/gpu-check > $OUT/gpu-check-console-fd.txt 2>&1
echo "gpu-check rc=$?"; tail -14 $OUT/gpu-check-console-fd.txt
echo "ptxas reports: $(grep -c 'spill stores' $OUT/build.log), with spills: $(grep 'spill stores' $OUT/build.log | grep -vc ' 0 bytes spill stores'), C75xx: $(grep -c 'C75[0-9][0-9]' $OUT/build.log)"
gzip -f $OUT/build.log
