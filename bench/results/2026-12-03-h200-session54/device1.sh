#!/usr/bin/env bash
# Session 54, call 1 (H200): GPU correctness of FLASHCUTE_SM90_FWD_PLAIN_SUM_CHECK=1 (session 53's
# change, default 1 in this tree; d 64's masked kernel). ps64 / ps64h: bf16 / fp16 d 64 CLI builds of
# this tree; psr64: bf16 with FORCE_RECOMPUTE=1 (every checked step recomputes S: the recompute's own
# test). fp64 checks (the standard d 64 list and session 53's 20 causal/window cases, incl. --scale
# 30/300), then compute-sanitizer (racecheck, synccheck, memcheck, initcheck). Packed after each step.
O=${OUT:-gpu-out}; mkdir -p $O/r
tar xJf build/vbin.tar.xz -C build
source bench/device_lib.sh
B=build/vbin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
bins ps64 psr64 ps64h > $O/r/bins.txt
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
V=ps64; chk_std 64 > $O/r/checks-$V.txt; chk 64 "${CAUSAL[@]}" >> $O/r/checks-$V.txt; tally $O/r/checks-$V.txt
pack; echo "ps64 checks done at $SECONDS s"
V=psr64; chk_std 64 > $O/r/checks-$V.txt; chk 64 "${CAUSAL[@]}" >> $O/r/checks-$V.txt; tally $O/r/checks-$V.txt
pack; echo "psr64 checks done at $SECONDS s"
V=ps64h; DTYPE=fp16 chk_std 64 > $O/r/checks-$V.txt; DTYPE=fp16 chk 64 "${CAUSAL[@]}" >> $O/r/checks-$V.txt; tally $O/r/checks-$V.txt
pack; echo "ps64h checks done at $SECONDS s"
S=$O/r/sanitizer.txt
V=ps64
for tool in racecheck synccheck memcheck initcheck; do
  [ $SECONDS -gt 480 ] && break
  san $tool 64 --batch 2 --heads 8 --seqlen 2048 --causal --fwd-workspace yes >> $S; pack
done
[ $SECONDS -lt 480 ] && san racecheck 64 --batch 1 --heads 4 --seqlen 2300 --causal --scale 30 --fwd-workspace yes >> $S
[ $SECONDS -lt 480 ] && san synccheck 64 --batch 1 --heads 4 --seqlen 3000 --causal --window-left 150 --fwd-workspace no >> $S
pack
V=psr64
[ $SECONDS -lt 480 ] && san racecheck 64 --batch 1 --heads 4 --seqlen 2048 --causal --fwd-workspace yes >> $S
[ $SECONDS -lt 480 ] && san synccheck 64 --batch 1 --heads 4 --seqlen 2048 --causal --fwd-workspace yes >> $S
[ $SECONDS -lt 480 ] && san memcheck 64 --batch 1 --heads 4 --seqlen 2048 --causal --fwd-workspace yes >> $S
tally $S; echo "sanitizer done at $SECONDS s"
pack && rm -rf $O/r
