#!/usr/bin/env bash
# Session 54, call 2 (H200): scripts/gpu-check of this tree (FLASHCUTE_SM90_FWD_PLAIN_SUM_CHECK
# default 1): the full SM90 build, every GPU test (gtest) and pytest. Nothing else in this call.
O=${OUT:-gpu-out}; mkdir -p $O/r/gc
OUT=$O/r/gc FLASHCUTE_STEPS="build tests pytest" FLASHCUTE_TEST_RUNNER=gtest FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a" \
  scripts/gpu-check > $O/r/gpucheck.log 2>&1
echo "gpu-check rc=$? at $SECONDS s"
tail -25 $O/r/gpucheck.log
rm -f $O/r/gc/build.log.gz
source bench/device_lib.sh
pack && rm -rf $O/r
