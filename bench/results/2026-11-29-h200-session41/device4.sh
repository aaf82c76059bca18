#!/usr/bin/env bash
# Session 41, call 4 (H200; call 3's machine): scripts/gpu-check (steps build, tests, pytest; sm_90a,
# every bucket, both dtypes, the gtest runner) on the working tree of main's head 65f9a23 plus Q's
# descriptors from lane 0's thread index at every head dim but the d 256 cluster kernel
# (`uniform-q-desc-all.patch`), as run (one command line).
O=$OUT; nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/gpu.txt; OUT=$O FLASHCUTE_STEPS="build tests pytest" FLASHCUTE_TEST_RUNNER=gtest FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a" timeout 560 scripts/gpu-check > $O/gpu-check-console.txt 2>&1; echo "gpu-check rc=$?"; tail -n 30 $O/gpu-check-console.txt; gzip -f $O/build.log $O/tests.log 2>/dev/null; rm -f $O/sanitizer.log; ls $O
