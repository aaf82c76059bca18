#!/usr/bin/env bash
# Session 50, call 3 (H200): d 64's masked kernel with its query blocks shifted by the warpgroups of
# padding (FLASHCUTE_SM90_FWD_SHIFT_ROWS=1: sh64 / sh64h) against main's kernels (main64 / main64h,
# the CLI builds pss64 / pss64h of call 1, whose kernels main has). fp64 checks and compute-sanitizer
# of sh64, ab_steady with cuDNN (2 rounds), then scripts/gpu-check (build, tests, pytest) on this
# tree, in the time left.
O=${OUT:-gpu-out}; mkdir -p $O/r
tar xJf build/vbin.tar.xz -C build
source bench/device_lib.sh
B=build/vbin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
bins main64 sh64 main64h sh64h > $O/r/bins.txt
pack() { sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*.md $O/r/*.log $O/r/*.txt 2>/dev/null; tar czf $O/r.tgz -C $O r; }
V=sh64
# Shifts of 64 (2048, 2000, 8192, 4100 x 3000) and 128 (4096, 2900, 63, 16384), seqlen_q != seqlen_k
# both ways, windows, GQA / MQA, batches of several heads, with and without a workspace.
chk_std 64 > $O/r/checks-$V.txt
chk 64 "--seqlen 2048 --causal --fwd-workspace yes" "--seqlen 4096 --causal --fwd-workspace yes" \
  "--seqlen 2000 --causal --fwd-workspace no" "--seqlen 4096 --causal --fwd-workspace no" \
  "--seqlen-q 4100 --seqlen-k 3000 --causal --fwd-workspace yes" "--seqlen-q 2048 --seqlen-k 4000 --causal --fwd-workspace yes" \
  "--seqlen-q 4096 --seqlen-k 2000 --causal --fwd-workspace no" "--seqlen-q 2100 --seqlen-k 2300 --causal --fwd-workspace yes" \
  "--seqlen 2900 --window-left 300 --window-right 100 --fwd-workspace yes" "--seqlen 4096 --window-left 1000 --window-right 0 --fwd-workspace no" \
  "--seqlen 2048 --window-left 0 --window-right 0 --fwd-workspace yes" "--seqlen 4096 --causal --heads-kv 1 --fwd-workspace yes" \
  "--seqlen 2048 --causal --batch 3 --heads 5 --fwd-workspace no" "--seqlen 2048 --causal --scale 30 --fwd-workspace yes" \
  "--seqlen 3000 --causal --heads-kv 4 --fwd-workspace yes" "--seqlen-q 2500 --seqlen-k 130 --causal --fwd-workspace no" \
  "--seqlen 8192 --causal --batch 1 --heads 8" "--seqlen 16384 --causal --batch 1 --heads 4" >> $O/r/checks-$V.txt
tally $O/r/checks-$V.txt
for tool in racecheck synccheck memcheck initcheck; do
  san $tool 64 --batch 2 --heads 8 --seqlen 4096 --causal --fwd-workspace yes >> $O/r/sanitizer-$V.txt
done
san racecheck 64 --batch 2 --heads 6 --seqlen 2048 --causal --fwd-workspace no >> $O/r/sanitizer-$V.txt
san memcheck 64 --batch 2 --heads 6 --seqlen-q 4100 --seqlen-k 3000 --causal --fwd-workspace no >> $O/r/sanitizer-$V.txt
san racecheck 64 --batch 2 --heads 6 --seqlen 2900 --window-left 300 --window-right 100 --fwd-workspace yes >> $O/r/sanitizer-$V.txt
tally $O/r/sanitizer-$V.txt
pack
echo "checks done at $SECONDS s"
for spec in bf16:main64,sh64:yes:2048:1200 bf16:main64,sh64:yes:4096:500 fp16:main64h,sh64h:yes:2048:1200; do
  IFS=: read -r dt vs c s n <<< "$spec"; t0=$SECONDS
  timeout 80 python3 bench/ab_steady.py --bin-dir $B --variants $vs --peer sdpa_cudnn --case 64:$c:$s \
    --iters $n --rounds 2 --dtype $dt --out $O/r/ab64-$dt-$c$s.md > $O/r/ab64-$dt-$c$s.log 2>&1
  echo "ab d64 $dt causal=$c $s rc=$? ($((SECONDS - t0)) s)"; grep "^| 64" $O/r/ab64-$dt-$c$s.md
  pack
done
pack && rm -rf $O/r
echo "gpu-check from $SECONDS s"
OUT=$O FLASHCUTE_STEPS="build tests pytest" FLASHCUTE_TEST_RUNNER=gtest FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a" \
  timeout $((585 - SECONDS)) scripts/gpu-check > $O/gpu-check.out 2>&1
echo "gpu-check rc=$? at $SECONDS s"; tail -22 $O/gpu-check.out
