#!/usr/bin/env bash
# Session 54, call 4 (H200): racecheck of the kernel's first launch only (--launch-count 1 on the
# forward kernel; the CLI's warm-up and timed launches run unchecked): psr64 (FORCE_RECOMPUTE: every
# step's scalar recompute reads K in shared memory), then ps64 at --scale 30 if time is left. Calls 1
# and 3 cut these runs at 60 / 100 s with every launch checked.
O=${OUT:-gpu-out}; mkdir -p $O/r
tar xJf build/vbin.tar.xz -C build
B=build/vbin
compute-sanitizer --help 2>&1 | grep -E -A2 "launch-count|kernel-name " | head -12 > $O/r/help.txt
rc1() {  # rc1 TIMEOUT VARIANT ARGS...
  local t=$SECONDS to=$1 v=$2; shift 2
  timeout "$to" compute-sanitizer --tool racecheck --error-exitcode 1 --kernel-name kns=fwd_kernel --launch-count 1 \
    "$B/$v/flashcute" run --backend sm90 --dtype bf16 --d 64 --iters 1 --check-heads 1 "$@" > san.txt 2>&1
  echo "rc=$? $((SECONDS - t))s $v racecheck(first launch) d64 $* :: $(grep -E 'SUMMARY|max\|out|rror' san.txt | tr '\n' ' ' | cut -c1-300)"
}
rc1 200 psr64 --batch 1 --heads 1 --seqlen 2048 --causal --fwd-workspace yes >> $O/r/sanitizer.txt
[ $SECONDS -lt 150 ] && rc1 $((250 - SECONDS)) ps64 --batch 1 --heads 1 --seqlen 2048 --causal --scale 30 --fwd-workspace yes >> $O/r/sanitizer.txt
cat $O/r/sanitizer.txt $O/r/help.txt
