#!/usr/bin/env bash
# Session 29, call 2: scripts/gpu-check's build (sm_90a, every bucket, both dtypes, the Python module)
# and pytest on that build tree, on the tree that lands the zeroed forward workspace (call 3 runs the
# GPU tests on the same build tree).
OUT=$OUT FLASHCUTE_STEPS="build pytest" FLASHCUTE_TEST_RUNNER=gtest FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a" \
  timeout 590 scripts/gpu-check > $OUT/gpu-check-console-build-pytest.txt 2>&1
echo "gpu-check rc=$?"; tail -12 $OUT/gpu-check-console-build-pytest.txt
echo "ptxas reports: $(grep -c 'spill stores' $OUT/build.log), with spills: $(grep 'spill stores' $OUT/build.log | grep -vc ' 0 bytes spill stores'), C75xx: $(grep -c 'C75[0-9][0-9]' $OUT/build.log)"
gzip -f $OUT/build.log
