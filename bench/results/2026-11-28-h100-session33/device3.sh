#!/usr/bin/env bash
# Session 33, call 3: scripts/gpu-check's build (sm_90a, every bucket, both dtypes) and pytest on this
# tree (the early tail on the kernels without ping-pong).
OUT=$OUT FLASHCUTE_STEPS="build pytest" FLASHCUTE_TEST_RUNNER=gtest FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a" \
  timeout 540 scripts/gpu-check > $OUT/gpu-check-console-build.txt 2>&1
echo "gpu-check rc=$?"; tail -8 $OUT/gpu-check-console-build.txt
echo "ptxas reports: $(grep -c 'spill stores' $OUT/build.log), with spills: $(grep 'spill stores' $OUT/build.log | grep -vc ' 0 bytes spill stores'), C75xx: $(grep -c 'C75[0-9][0-9]' $OUT/build.log)"
grep 'spill stores' $OUT/build.log | grep -v ' 0 bytes spill stores' | head -3
grep -E "passed|failed" $OUT/tests.log | tail -3
gzip -f $OUT/build.log
