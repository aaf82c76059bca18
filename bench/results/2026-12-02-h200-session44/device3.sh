#!/usr/bin/env bash
# Session 44, call 3: scripts/gpu-check's build and GPU tests on the landed tree (half_first on at
# d 128), sm_90a, both dtypes, d 128 only (the one head dim whose kernels changed).
O=$OUT; OUT=$O FLASHCUTE_STEPS="build tests" FLASHCUTE_TEST_RUNNER=gtest \
  FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a -DFLASHCUTE_HEAD_DIMS=128 -DFLASHCUTE_BUILD_PYTHON=OFF" \
  timeout 540 scripts/gpu-check > $O/gpu-check-console.txt 2>&1
echo "gpu-check rc=$?"; tail -n 22 $O/gpu-check-console.txt
grep -c "HGMMA\|C751" $O/build.log; grep "C751" $O/build.log | head -3
sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/*.log $O/*.txt $O/*.json 2>/dev/null; gzip -f $O/build.log $O/tests.log 2>/dev/null
[ -d $O/gtest ] && tar czf $O/gtest-logs.tgz -C $O gtest && rm -rf $O/gtest; ls $O
