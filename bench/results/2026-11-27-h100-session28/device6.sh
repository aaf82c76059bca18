#!/usr/bin/env bash
# Session 28, call 5: the pytest step that call 4's 590 s limit cut (scripts/gpu-check: build for
# sm_90a with every bucket and both dtypes, then pytest on that build tree), same tree (dc7d240).
OUT=$OUT FLASHCUTE_STEPS="build pytest" FLASHCUTE_TEST_RUNNER=gtest FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a" \
  timeout 590 scripts/gpu-check > $OUT/gpu-check-console.txt 2>&1
echo "gpu-check rc=$?"; tail -12 $OUT/gpu-check-console.txt
rm -f $OUT/build.log
