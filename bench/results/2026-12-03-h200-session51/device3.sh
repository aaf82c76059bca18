#!/usr/bin/env bash
# Session 51, call 3 (H200): the lead_whole forms of the masked kernel's first block compare only the
# right edge (left_seen; ro64 / ro64h), against main's d 64 kernels (pm64 / pm64h: call 1's, which
# main has). fp64 checks and compute-sanitizer of ro64, ab_steady with cuDNN in the same rounds, then
# gpu-check's build and GPU tests on this tree (pytest left out for time) in what is left of the call.
O=${OUT:-gpu-out}; mkdir -p $O/r
tar xJf build/vbin.tar.xz -C build
source bench/device_lib.sh
B=build/vbin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
bins pm64 ro64 pm64h ro64h > $O/r/bins.txt
pack() { sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*.md $O/r/*.log $O/r/*.txt 2>/dev/null; tar czf $O/r.tgz -C $O r; }
extra=("--seqlen 2048 --causal --fwd-workspace yes" "--seqlen 4096 --causal --fwd-workspace no"
  "--seqlen-q 4100 --seqlen-k 3000 --causal --fwd-workspace yes" "--seqlen-q 2048 --seqlen-k 4000 --causal --fwd-workspace yes"
  "--seqlen 2900 --window-left 300 --window-right 100 --fwd-workspace yes" "--seqlen 4096 --causal --heads-kv 1 --fwd-workspace yes"
  "--seqlen-q 2000 --seqlen-k 2048 --causal --fwd-workspace yes" "--seqlen-q 1984 --seqlen-k 2048 --causal --fwd-workspace no"
  "--seqlen-q 3000 --seqlen-k 3100 --causal --fwd-workspace yes" "--seqlen-q 3052 --seqlen-k 3000 --causal --fwd-workspace no"
  "--seqlen 2048 --causal --window-left 100 --fwd-workspace yes" "--seqlen 3000 --causal --window-left 150 --fwd-workspace no"
  "--seqlen 4096 --causal --window-left 1000 --fwd-workspace yes" "--seqlen 2500 --window-left 40 --window-right 0 --fwd-workspace yes"
  "--seqlen 8192 --causal --batch 1 --heads 8")
V=ro64
chk_std 64 > $O/r/checks-$V.txt
chk 64 "${extra[@]}" >> $O/r/checks-$V.txt
tally $O/r/checks-$V.txt
for tool in racecheck synccheck memcheck initcheck; do
  san $tool 64 --batch 2 --heads 8 --seqlen 2048 --causal --fwd-workspace yes >> $O/r/sanitizer-$V.txt
done
tally $O/r/sanitizer-$V.txt
pack
echo "checks done at $SECONDS s"
for spec in bf16:pm64,ro64:yes:2048:1200 fp16:pm64h,ro64h:yes:2048:1200; do
  IFS=: read -r dt vs c s n <<< "$spec"; t0=$SECONDS
  timeout 70 python3 bench/ab_steady.py --bin-dir $B --variants $vs --peer sdpa_cudnn --case 64:$c:$s \
    --iters $n --rounds 3 --dtype $dt --out $O/r/ab64-$dt-$c$s.md > $O/r/ab64-$dt-$c$s.log 2>&1
  echo "ab d64 $dt causal=$c $s rc=$? ($((SECONDS - t0)) s)"; grep "^| 64" $O/r/ab64-$dt-$c$s.md
  pack
done
left=$((585 - SECONDS)); echo "gpu-check with ${left} s"
mkdir -p $O/g
OUT=$O/g FLASHCUTE_STEPS="build tests" FLASHCUTE_TEST_RUNNER=gtest FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a" \
  timeout $left scripts/gpu-check > $O/gpu-check.out 2>&1; echo "gpu-check rc=$?"; tail -22 $O/gpu-check.out
pack && rm -rf $O/r
