#!/usr/bin/env bash
# Session 41, call 1 (H200): scripts/gpu-check on main's head (65f9a23: session 40's uniform K/V stage),
# steps build, tests, pytest; sm_90a, every bucket, both dtypes, the gtest runner.
O=${OUT:-gpu-out}
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/gpu.txt
OUT=$O FLASHCUTE_STEPS="build tests pytest" FLASHCUTE_TEST_RUNNER=gtest FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a" \
  timeout 570 scripts/gpu-check > $O/gpu-check-console.txt 2>&1
echo "gpu-check rc=$?"; tail -n 30 $O/gpu-check-console.txt
gzip -f $O/build.log $O/tests.log 2>/dev/null; ls $O
