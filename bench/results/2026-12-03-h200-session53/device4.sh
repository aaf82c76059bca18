#!/usr/bin/env bash
# Session 53, call 4 (H200; call 3, this call's first form, got no machine): the plain loop's interior
# blocks through the sum check (plain-sum-check.patch, FLASHCUTE_SM90_FWD_PLAIN_SUM_CHECK=1, on in
# this tree for d 64's masked kernel; ps64 / ps64h, bf16 / fp16 d 64 CLI builds, 0 spills) against
# main's kernels (base64 / base64h). ab_steady with cuDNN first (the GPU quiet), then scripts/gpu-check
# on this tree with the CLI's fp64 checks and compute-sanitizer runs beside its build (psr64: the
# same with FORCE_RECOMPUTE=1, every checked step recomputing S: the recompute's own test).
O=${OUT:-gpu-out}; mkdir -p $O/r
tar xJf build/vbin.tar.xz -C build
source bench/device_lib.sh
B=build/vbin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
bins base64 ps64 psr64 base64h ps64h > $O/r/bins.txt
steady_part ab64-bf16-c8k base64,ps64 300 bf16 3 64:yes:8192
steady_part ab64-bf16-c4k base64,ps64 600 bf16 3 64:yes:4096
[ $SECONDS -lt 80 ] && steady_part ab64-fp16-c8k base64h,ps64h 300 fp16 3 64:yes:8192
pack
echo "ab done at $SECONDS s"
CAUSAL=("--seqlen 2048 --causal --fwd-workspace yes" "--seqlen 4096 --causal --fwd-workspace no"
  "--seqlen-q 4100 --seqlen-k 3000 --causal --fwd-workspace yes" "--seqlen-q 2048 --seqlen-k 4000 --causal --fwd-workspace yes"
  "--seqlen 2900 --window-left 300 --window-right 100 --fwd-workspace yes" "--seqlen 4096 --causal --heads-kv 1 --fwd-workspace yes"
  "--seqlen-q 2000 --seqlen-k 2048 --causal --fwd-workspace yes" "--seqlen-q 1984 --seqlen-k 2048 --causal --fwd-workspace no"
  "--seqlen-q 3000 --seqlen-k 3100 --causal --fwd-workspace yes" "--seqlen-q 3052 --seqlen-k 3000 --causal --fwd-workspace no"
  "--seqlen 2048 --causal --window-left 100 --fwd-workspace yes" "--seqlen 3000 --causal --window-left 150 --fwd-workspace no"
  "--seqlen 4096 --causal --window-left 1000 --fwd-workspace yes" "--seqlen 2500 --window-left 40 --window-right 0 --fwd-workspace yes"
  "--seqlen 8192 --causal --batch 1 --heads 8" "--seqlen-q 1200 --seqlen-k 5000 --causal --fwd-workspace yes"
  "--seqlen-q 5000 --seqlen-k 1200 --causal --fwd-workspace no" "--seqlen 2300 --causal --scale 30 --fwd-workspace yes"
  "--seqlen 3000 --causal --scale 300 --fwd-workspace yes" "--seqlen 2900 --window-left 300 --window-right 100 --scale 50 --fwd-workspace yes")
(
  V=ps64; chk_std 64 > $O/r/checks-$V.txt; chk 64 "${CAUSAL[@]}" >> $O/r/checks-$V.txt; tally $O/r/checks-$V.txt
  V=psr64; chk 64 "${CAUSAL[@]}" > $O/r/checks-$V.txt; tally $O/r/checks-$V.txt
  V=ps64
  for tool in racecheck synccheck memcheck initcheck; do
    san $tool 64 --batch 2 --heads 8 --seqlen 2048 --causal --fwd-workspace yes >> $O/r/sanitizer-$V.txt
  done
  san racecheck 64 --batch 1 --heads 4 --seqlen 2300 --causal --scale 30 --fwd-workspace yes >> $O/r/sanitizer-$V.txt
  V=psr64
  san racecheck 64 --batch 1 --heads 4 --seqlen 2048 --causal --fwd-workspace yes >> $O/r/sanitizer-ps64.txt
  san synccheck 64 --batch 1 --heads 4 --seqlen 2048 --causal --fwd-workspace yes >> $O/r/sanitizer-ps64.txt
  tally $O/r/sanitizer-ps64.txt
  echo "checks done at $SECONDS s"
) > $O/r/checks.log 2>&1 &
mkdir -p $O/r/gc
OUT=$O/r/gc FLASHCUTE_STEPS="build tests pytest" FLASHCUTE_TEST_RUNNER=gtest FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a" \
  scripts/gpu-check > $O/r/gpucheck.log 2>&1
echo "gpu-check rc=$? at $SECONDS s"
wait
cat $O/r/checks.log; tail -22 $O/r/gpucheck.log
rm -f $O/r/gc/build.log.gz
pack && rm -rf $O/r
