#!/usr/bin/env bash
# Session 52, call 3 (H200): gpu-check (build, GPU tests; pytest left out for time) on the tree with
# session 51's review mend (review-ranges.patch), the only kernel change this session lands.
O=${OUT:-gpu-out}; mkdir -p $O/g
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/gpu.txt
OUT=$O/g FLASHCUTE_STEPS="build tests" FLASHCUTE_TEST_RUNNER=gtest FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a" \
  timeout 430 scripts/gpu-check > $O/gpu-check.out 2>&1; echo "gpu-check rc=$?"; tail -22 $O/gpu-check.out
