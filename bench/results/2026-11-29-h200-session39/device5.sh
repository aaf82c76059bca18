#!/usr/bin/env bash
# Session 39, call 5 (H200): the forward GPU tests of the landed tree's d 128 kernels (the carried
# executables: gpu_test_fwd_{grid,edge,errors,sm90_layouts}; the backward's kernels did not change). Built on
# the CPU machine (build/ab39/tests: sm_90a, fp16 and bf16, head dim 128 only; other buckets' cases
# skip as "kernel not in this build"), run as scripts/gpu-check's gtest runner does, then
# compute-sanitizer (racecheck, synccheck, memcheck; 60 s each, in that order, as the call's time allows) on the forward's varlen edge cases, where the
# per-warp store runs under the warpgroup's barriers.
O=${OUT:-gpu-out}/r; mkdir -p $O/gtest
T=build/ab39/tests/tests
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/gpu.txt
pids=()
for exe in $T/gpu_test_*; do
  [[ -x $exe && -f $exe ]] || continue
  "$exe" --gtest_brief=1 > $O/gtest/$(basename $exe).log 2>&1 &
  pids+=($!)
done
rc=0; for pid in "${pids[@]}"; do wait $pid || rc=1; done
echo "gpu tests rc=$rc"
for f in $O/gtest/*.log; do
  echo "-- $(basename $f .log): $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $f | tr '\n' ' ')"
  grep -E '^\[  FAILED  \]|REPRO' $f | head -5
done | tee $O/summary.txt
# At most 8 files come back: the test logs travel as one archive.
tar czf $O/gtest-logs.tgz -C $O gtest && rm -rf $O/gtest
for tool in racecheck synccheck memcheck; do
  t0=$SECONDS
  echo "== $tool" >> $O/sanitizer.log
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 $T/gpu_test_fwd_edge --gtest_brief=1 \
    --gtest_filter='*FwdVarlen*' > san.txt 2>&1
  echo "sanitizer $tool rc=$? ($((SECONDS - t0)) s): $(grep -E 'SUMMARY|PASSED|FAILED' san.txt | tr '\n' ' ')" | tee -a $O/summary.txt
  cat san.txt >> $O/sanitizer.log
done
