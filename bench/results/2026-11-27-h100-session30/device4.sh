#!/usr/bin/env bash
# Session 30, call 4 (same machine and build tree as call 3): scripts/gpu-check's GPU tests;
# compute-sanitizer synccheck and racecheck on d 64's ping-pong kernels (CLI runs, bf16 and fp16:
# non-persistent at 2k keys without a workspace, the dynamic persistent one with it); the forward
# grids (scripts/gpu-grid).
OUT=$OUT FLASHCUTE_STEPS="tests" FLASHCUTE_TEST_RUNNER=gtest FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a" \
  timeout 280 scripts/gpu-check > $OUT/gpu-check-console-tests.txt 2>&1
echo "gpu-check rc=$?"; tail -12 $OUT/gpu-check-console-tests.txt
B=build/gpu/apps/flashcute; t0=$SECONDS
{ for tool in synccheck racecheck; do for dt in bf16 fp16; do for ws in no yes; do
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 $B run --backend sm90 --dtype $dt --d 64 \
      --batch 1 --heads 2 --seqlen 2048 --iters 1 --check-heads 1 --fwd-workspace $ws > san.txt 2>&1
    echo "rc=$? $tool $dt workspace=$ws :: $(grep -E 'ERROR SUMMARY|max\|out' san.txt | tr '\n' ' ' | cut -c1-200)"
  done; done; done; } > $OUT/sanitizer-d64-pingpong.txt 2>&1
echo "sanitizer ($((SECONDS - t0)) s):"; cat $OUT/sanitizer-d64-pingpong.txt
GRID_SPECS="${GRID_SPECS:-64:run1 128:run1 256:run1}" GRID_TIMEOUT=90 scripts/gpu-grid
