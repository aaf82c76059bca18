#!/usr/bin/env bash
# Session 47, call 2 (H200): scripts/gpu-check on this session's tree (5f1a19f: d 256's masked short tiles with
# one release per warpgroup and per-warp skip arrivals), steps build, tests, pytest; sm_90a, every bucket,
# both dtypes, the gtest runner.
O=${OUT:-gpu-out}
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv,noheader > $O/gpu.txt
OUT=$O FLASHCUTE_STEPS="build tests pytest" FLASHCUTE_TEST_RUNNER=gtest FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a" \
  timeout 570 scripts/gpu-check > $O/gpu-check-console.txt 2>&1
echo "gpu-check rc=$?"; tail -n 30 $O/gpu-check-console.txt
grep -c "bytes spill stores" $O/build.log; grep -E "[1-9][0-9]* bytes spill stores" $O/build.log | head -3; grep -c "C751" $O/build.log
sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/*.log $O/*.txt $O/*.json 2>/dev/null
gzip -f $O/build.log $O/tests.log 2>/dev/null
[[ -d $O/gtest ]] && tar czf $O/gtest-logs.tgz -C $O gtest && rm -rf $O/gtest
ls $O
