#!/usr/bin/env bash
# Session 32, call 3: scripts/gpu-check's build (sm_90a, every bucket, both dtypes) and pytest on this
# tree (d 256's masked short tiles with O split, non-causal up to 2k keys); then the non-causal 1k / 2k
# A/B of call 2 without a workspace (one CTA per tile on the short tiles against the row's
# non-persistent kernel), ab_steady 800 launches, 2 rounds.
OUT=$OUT FLASHCUTE_STEPS="build pytest" FLASHCUTE_TEST_RUNNER=gtest FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a" \
  timeout 480 scripts/gpu-check > $OUT/gpu-check-console-build.txt 2>&1
echo "gpu-check rc=$?"; tail -8 $OUT/gpu-check-console-build.txt
echo "ptxas reports: $(grep -c 'spill stores' $OUT/build.log), with spills: $(grep 'spill stores' $OUT/build.log | grep -vc ' 0 bytes spill stores'), C75xx: $(grep -c 'C75[0-9][0-9]' $OUT/build.log)"
grep -E "passed|failed" $OUT/tests.log | tail -3
gzip -f $OUT/build.log
for v in base wide; do echo "--fwd-workspace no" > build/ab41/$v/args; done
timeout 90 python3 bench/ab_steady.py --bin-dir build/ab41 --variants base,wide \
  --case 256:no:1024 --case 256:no:2048 --iters 800 --rounds 2 --out $OUT/ab-wide-noworkspace.md > $OUT/ab-wide-noworkspace.log 2>&1
echo "ab rc=$?"; tail -4 $OUT/ab-wide-noworkspace.md
