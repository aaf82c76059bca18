#!/usr/bin/env bash
# Session 49, call 2 (H200): scripts/gpu-check (build, tests, pytest; sm_90a, every bucket, both
# dtypes, the gtest runner) on this session's tree (d 64's masked kernel in parts on its first block;
# d 256's early Q release and fast decode on), then compute-sanitizer on d 256's changed kernels
# (the masked short tiles, the dynamic persistent kernel), bf16, with the
# build's CLI.
O=${OUT:-gpu-out}
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv,noheader > $O/gpu.txt
OUT=$O FLASHCUTE_STEPS="build tests pytest" FLASHCUTE_TEST_RUNNER=gtest FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a" \
  timeout 530 scripts/gpu-check > $O/gpu-check-console.txt 2>&1
echo "gpu-check rc=$?"; tail -n 30 $O/gpu-check-console.txt
grep -c "bytes spill stores" $O/build.log; grep -E "[1-9][0-9]* bytes spill stores" $O/build.log | head -3; grep -c "C751" $O/build.log
mkdir -p build/gpu/vb/cur && cp build/gpu/apps/flashcute build/gpu/vb/cur/ 2>/dev/null
source bench/device_lib.sh
B=build/gpu/vb; V=cur
{
  for tool in racecheck synccheck memcheck initcheck; do
    [ $SECONDS -gt 575 ] && break
    san $tool 256 --batch 2 --heads 8 --seqlen 700 --causal --fwd-workspace yes
  done
  san racecheck 256 --batch 2 --heads 8 --seqlen 1000 --fwd-workspace yes
  san memcheck 256 --batch 2 --heads 8 --seqlen 1000 --fwd-workspace no
} > $O/sanitizer.txt 2>&1
tally $O/sanitizer.txt
sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/*.log $O/*.txt $O/*.json 2>/dev/null
gzip -f $O/build.log $O/tests.log 2>/dev/null
[[ -d $O/gtest ]] && tar czf $O/gtest-logs.tgz -C $O gtest && rm -rf $O/gtest
