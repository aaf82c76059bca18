#!/usr/bin/env bash
# Session 51, call 1 (H200): the plain loop's first key block masked only from its last computed
# 64-key part where the warpgroup's rows see every key before it (FLASHCUTE_SM90_FWD_PART_MASK, on in
# pm64 / pm64h), against main's d 64 kernels (main64 / main64h: session 50's pss64 / pss64h, whose
# kernels main has). CLI builds from the CPU machine, carried as one xz tarball (build/vbin.tar.xz).
# fp64 checks and compute-sanitizer of pm64; ab_steady with cuDNN in the same rounds.
O=${OUT:-gpu-out}; mkdir -p $O/r
tar xJf build/vbin.tar.xz -C build
source bench/device_lib.sh
B=build/vbin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
bins main64 pm64 main64h pm64h > $O/r/bins.txt
pack() { sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*.md $O/r/*.log $O/r/*.txt 2>/dev/null; tar czf $O/r.tgz -C $O r; }
# Session 50's list (last query blocks with empty warpgroups, windows, softcap, GQA, long), then
# diagonals off the 64-key parts (seqlen_k - seqlen_q = 48, 64, 100, -52) and windows whose left
# edge cuts the parts before a warpgroup's diagonal part (lead_whole false).
extra=("--seqlen 2048 --causal --fwd-workspace yes" "--seqlen 4096 --causal --fwd-workspace yes"
  "--seqlen 2000 --causal --fwd-workspace no" "--seqlen 4096 --causal --fwd-workspace no"
  "--seqlen-q 4100 --seqlen-k 3000 --causal --fwd-workspace yes" "--seqlen-q 2048 --seqlen-k 4000 --causal --fwd-workspace yes"
  "--seqlen-q 4096 --seqlen-k 2000 --causal --fwd-workspace no" "--seqlen 2900 --window-left 300 --window-right 100 --fwd-workspace yes"
  "--seqlen 2048 --window-left 0 --window-right 0 --fwd-workspace yes" "--seqlen 4096 --causal --heads-kv 1 --fwd-workspace yes"
  "--seqlen 2048 --causal --batch 3 --heads 5 --fwd-workspace no" "--seqlen 2048 --causal --scale 30 --fwd-workspace yes"
  "--seqlen 2048 --softcap 30 --fwd-workspace yes" "--seqlen 4096 --causal --softcap 20 --fwd-workspace no"
  "--seqlen 63 --softcap 30 --fwd-workspace yes" "--seqlen 130 --causal --softcap 30 --fwd-workspace no"
  "--seqlen 8192 --causal --batch 1 --heads 8" "--seqlen 16384 --causal --batch 1 --heads 4"
  "--seqlen-q 2000 --seqlen-k 2048 --causal --fwd-workspace yes" "--seqlen-q 1984 --seqlen-k 2048 --causal --fwd-workspace no"
  "--seqlen-q 3000 --seqlen-k 3100 --causal --fwd-workspace yes" "--seqlen-q 3052 --seqlen-k 3000 --causal --fwd-workspace no"
  "--seqlen 2048 --causal --window-left 100 --fwd-workspace yes" "--seqlen 3000 --causal --window-left 150 --fwd-workspace no"
  "--seqlen 4096 --causal --window-left 1000 --fwd-workspace yes" "--seqlen 2500 --window-left 40 --window-right 0 --fwd-workspace yes")
V=pm64
chk_std 64 > $O/r/checks-$V.txt
chk 64 "${extra[@]}" >> $O/r/checks-$V.txt
tally $O/r/checks-$V.txt
for tool in racecheck synccheck memcheck initcheck; do
  san $tool 64 --batch 2 --heads 8 --seqlen 2048 --causal --fwd-workspace yes >> $O/r/sanitizer-$V.txt
done
san racecheck 64 --batch 2 --heads 6 --seqlen-q 2000 --seqlen-k 2048 --causal --fwd-workspace no >> $O/r/sanitizer-$V.txt
san memcheck 64 --batch 2 --heads 6 --seqlen 3000 --causal --window-left 150 --fwd-workspace no >> $O/r/sanitizer-$V.txt
tally $O/r/sanitizer-$V.txt
pack
echo "checks done at $SECONDS s"
for spec in bf16:main64,pm64:yes:2048:1200 fp16:main64h,pm64h:yes:2048:1200 bf16:main64,pm64:yes:4096:500 \
            fp16:main64h,pm64h:yes:4096:500 bf16:main64,pm64:yes:8192:200; do
  IFS=: read -r dt vs c s n <<< "$spec"; t0=$SECONDS
  [ $SECONDS -gt 480 ] && { echo "skip $spec (time)"; continue; }
  timeout 100 python3 bench/ab_steady.py --bin-dir $B --variants $vs --peer sdpa_cudnn --case 64:$c:$s \
    --iters $n --rounds 3 --dtype $dt --out $O/r/ab64-$dt-$c$s.md > $O/r/ab64-$dt-$c$s.log 2>&1
  echo "ab d64 $dt causal=$c $s rc=$? ($((SECONDS - t0)) s)"; grep "^| 64" $O/r/ab64-$dt-$c$s.md
  pack
done
pack && rm -rf $O/r
