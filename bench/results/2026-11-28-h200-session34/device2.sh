#!/usr/bin/env bash
# Session 34, call 2 (a fresh H200 machine: call 1's went back while idle, so the CLI and the Python
# extension are rebuilt first, sm_90a, every bucket, both dtypes): compute-sanitizer on the kernels
# session 33's early tail changed (d 64's four-warpgroup short tiles: the early WAR wait; d 256's
# overlapped kernels: the rows' 1/sum + LSE and the early WAR wait), fp64-checked CLI runs; then the
# forward grids (scripts/gpu-grid) at d 128 and 64, one run each.
t0=$SECONDS
{ cmake --preset gpu -DFLASHCUTE_ARCHS=90a && cmake --build --preset gpu -j 16 --target flashcute_cli flashcute_ext; } > $OUT/build-call2.log 2>&1
echo "build rc=$? ($((SECONDS - t0)) s), spills: $(grep 'spill stores' $OUT/build-call2.log | grep -vc ' 0 bytes spill stores') of $(grep -c 'spill stores' $OUT/build-call2.log)"
gzip -f $OUT/build-call2.log
B=build/gpu/apps/flashcute; t0=$SECONDS
san() {
  local tool=$1; shift
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 $B run --backend sm90 --batch 1 --heads 2 --iters 1 --check-heads 1 "$@" > san.txt 2>&1
  echo "rc=$? $tool $* :: $(grep -E 'SUMMARY|max\|out' san.txt | tr '\n' ' ' | cut -c1-220)"
}
{
  for tool in racecheck synccheck; do
    san $tool --dtype bf16 --d 64 --seqlen 500 --fwd-workspace yes
    san $tool --dtype fp16 --d 64 --seqlen 500 --fwd-workspace no
    san $tool --dtype bf16 --d 256 --seqlen 700 --causal --fwd-workspace yes
    san $tool --dtype fp16 --d 256 --seqlen 1000 --fwd-workspace yes
    san $tool --dtype bf16 --d 256 --seqlen 3000 --causal --fwd-workspace no
  done
  san memcheck --dtype bf16 --d 256 --seqlen 700 --causal --fwd-workspace yes
  san initcheck --dtype bf16 --d 64 --seqlen 500 --fwd-workspace no
} > $OUT/sanitizer-early-tail.txt 2>&1
echo "sanitizer ($((SECONDS - t0)) s): $(grep -c '^rc=0' $OUT/sanitizer-early-tail.txt) of $(grep -c '^rc=' $OUT/sanitizer-early-tail.txt) rc=0"
grep -v '^rc=0' $OUT/sanitizer-early-tail.txt | head -5
GRID_SPECS="${GRID_SPECS:-128:run1 64:run1}" GRID_TIMEOUT=150 scripts/gpu-grid
ls $OUT
