#!/usr/bin/env bash
# Session 42, call 5 (H200, a fresh machine), as run (one command line): scripts/gpu-check's build and
# GPU tests on the landed tree (83754a6: the dynamic limits and the new test cases), sm_90a, both
# dtypes, d 64 and d 128 only (the head dims whose dispatch changed; to fit the device time left).
O=$OUT; OUT=$O FLASHCUTE_STEPS="build tests" FLASHCUTE_TEST_RUNNER=gtest \
  FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a -DFLASHCUTE_HEAD_DIMS=64;128 -DFLASHCUTE_BUILD_PYTHON=OFF" \
  timeout 315 scripts/gpu-check > $O/gpu-check-console.txt 2>&1
echo "gpu-check rc=$?"; tail -n 22 $O/gpu-check-console.txt
sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/*.log $O/*.txt $O/*.json 2>/dev/null; gzip -f $O/build.log $O/tests.log 2>/dev/null; ls $O
