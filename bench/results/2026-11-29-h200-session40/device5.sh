#!/usr/bin/env bash
# Session 40, call 5 (H200): the persistent kernels' K/V stage marked warp-uniform at each tile's start
# (FLASHCUTE_SM90_FWD_UNIFORM_STAGE). CLI builds made on the CPU machine (bf16, d 64 / 128 / 256,
# sm_90a) in build/ab40bin: base0 (this tree with the switch 0: main's kernels), uni2 (the switch 1,
# the default). Then the forward's GPU test executables of uni2's build tree (bf16, buckets 64 / 128
# / 256; other buckets' cases skip), carried as build/ab40/tests.tar.xz; compute-sanitizer and fp64
# checks of uni2.
O=${OUT:-gpu-out}; mkdir -p $O/r
source bench/device_lib.sh
B=build/ab40bin
bins base0 uni2 > $O/r/bins.txt; cat $O/r/bins.txt
t0=$SECONDS
timeout 180 python3 bench/ab_steady.py --bin-dir $B --variants base0,uni2 --case 128:no:512 --case 128:no:2048 --case 128:no:4096 \
  --case 128:yes:2048 --case 64:no:2048 --case 64:yes:1024 --iters 600 --rounds 3 --out $O/r/ab.md > $O/r/ab.log 2>&1
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat $O/r/ab.md
T=build/ab40/tests
[[ -f build/ab40/tests.tar.xz ]] && tar xJf build/ab40/tests.tar.xz -C build/ab40
if [[ -d $T ]]; then
  mkdir -p $O/r/gtest; t0=$SECONDS; pids=()
  for exe in $T/gpu_test_fwd_*; do
    [[ -x $exe && -f $exe ]] || continue
    timeout 110 "$exe" --gtest_brief=1 > $O/r/gtest/$(basename $exe).log 2>&1 &
    pids+=($!)
  done
  rc=0; for pid in "${pids[@]}"; do wait $pid || rc=1; done
  echo "gpu tests rc=$rc ($((SECONDS - t0)) s)"
  for f in $O/r/gtest/*.log; do
    echo "-- $(basename $f .log): $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $f | tr '\n' ' ')"
    grep -E '^\[  FAILED  \]|REPRO' $f | head -5
  done | tee $O/r/gtest-summary.txt
  tar czf $O/r/gtest-logs.tgz -C $O/r gtest && rm -rf $O/r/gtest
fi
V=uni2
{ san racecheck 128 --batch 2 --heads 16 --seqlen 2000 --fwd-workspace yes
  san synccheck 64 --batch 2 --heads 16 --seqlen 700 --causal --fwd-workspace yes
  san racecheck 256 --batch 2 --heads 8 --seqlen 1500 --causal --fwd-workspace yes
  san memcheck 64 --batch 2 --heads 16 --seqlen 1900 --fwd-workspace yes; } > $O/r/sanitizer.txt 2>&1
cut -c1-200 $O/r/sanitizer.txt
{ chk_std 128; chk_std 64
  chk 256 "--seqlen 2000 --fwd-workspace yes" "--seqlen 3000 --causal --fwd-workspace yes" "--seqlen 1000 --fwd-workspace no" \
    "--seqlen-q 1000 --seqlen-k 400 --causal --fwd-workspace yes"; } > $O/r/checks-uni2.txt 2>&1
tally $O/r/checks-uni2.txt
tar czf $O/r.tgz -C $O r && rm -rf $O/r
