#!/usr/bin/env bash
# Session 36, call 2 (H200): scripts/gpu-check's build (sm_90a, every bucket, both dtypes), every GPU
# and CPU test (one process per GoogleTest executable) and pytest, on this tree (per-warpgroup Q with
# the reversed rows and the skip loop's warpgroup barrier on by default: FLASHCUTE_SM90_FWD_WG_Q=2).
OUT=$OUT FLASHCUTE_STEPS="build tests pytest" FLASHCUTE_TEST_RUNNER=gtest FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a" \
  timeout 560 scripts/gpu-check > $OUT/gpu-check-console.txt 2>&1
echo "gpu-check rc=$?"; tail -16 $OUT/gpu-check-console.txt
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,memory.total --format=csv,noheader > $OUT/gpu.txt
echo "ptxas reports: $(grep -c 'spill stores' $OUT/build.log), with spills: $(grep 'spill stores' $OUT/build.log | grep -vc ' 0 bytes spill stores'), C75xx: $(grep -c 'C75[0-9][0-9]' $OUT/build.log)"
grep -E "passed|failed" $OUT/tests.log | tail -3
gzip -f $OUT/build.log $OUT/tests.log
cd $OUT && tar czf all.tgz --exclude=all.tgz --exclude=gpu-check-console.txt . && find . -mindepth 1 ! -name all.tgz ! -name gpu-check-console.txt ! -name gpu.txt -delete; ls $OUT
