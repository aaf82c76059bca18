#!/usr/bin/env bash
# Session 52, call 4 (H200): session 51's review mend (review-ranges.patch; rr64 / rr64h, bf16 / fp16
# d 64 CLI builds: the masked kernel's SASS reordered, same 6472 instructions, every other d 64 kernel
# identical) against main's kernels (pm64 / pm64h): fp64 checks and compute-sanitizer of rr64, then
# ab_steady with cuDNN at causal 2k (both dtypes) and fp16 causal 8k (not re-measured since session 45). (What was left of the device time did not hold a gpu-check.)
O=${OUT:-gpu-out}; mkdir -p $O/r
tar xJf build/vbin.tar.xz -C build
source bench/device_lib.sh
B=build/vbin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
bins pm64 rr64 pm64h rr64h > $O/r/bins.txt
pack() { sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*.md $O/r/*.log $O/r/*.txt 2>/dev/null; tar czf $O/r.tgz -C $O r; }
V=rr64
chk_std 64 > $O/r/checks-$V.txt
chk 64 "--seqlen 2048 --causal --fwd-workspace yes" "--seqlen 4096 --causal --fwd-workspace no" \
  "--seqlen-q 4100 --seqlen-k 3000 --causal --fwd-workspace yes" "--seqlen-q 2048 --seqlen-k 4000 --causal --fwd-workspace yes" \
  "--seqlen 2900 --window-left 300 --window-right 100 --fwd-workspace yes" "--seqlen 4096 --causal --heads-kv 1 --fwd-workspace yes" \
  "--seqlen-q 2000 --seqlen-k 2048 --causal --fwd-workspace yes" "--seqlen-q 1984 --seqlen-k 2048 --causal --fwd-workspace no" \
  "--seqlen-q 3000 --seqlen-k 3100 --causal --fwd-workspace yes" "--seqlen-q 3052 --seqlen-k 3000 --causal --fwd-workspace no" \
  "--seqlen 2048 --causal --window-left 100 --fwd-workspace yes" "--seqlen 3000 --causal --window-left 150 --fwd-workspace no" \
  "--seqlen 4096 --causal --window-left 1000 --fwd-workspace yes" "--seqlen 2500 --window-left 40 --window-right 0 --fwd-workspace yes" \
  "--seqlen 8192 --causal --batch 1 --heads 8" "--seqlen-q 1200 --seqlen-k 5000 --causal --fwd-workspace yes" \
  "--seqlen-q 5000 --seqlen-k 1200 --causal --fwd-workspace no" "--seqlen 2300 --causal --scale 30 --fwd-workspace yes" >> $O/r/checks-$V.txt
tally $O/r/checks-$V.txt
for tool in racecheck synccheck memcheck initcheck; do
  san $tool 64 --batch 2 --heads 8 --seqlen 2048 --causal --fwd-workspace yes >> $O/r/sanitizer-$V.txt
done
san racecheck 64 --batch 1 --heads 4 --seqlen-q 3052 --seqlen-k 3000 --causal --fwd-workspace no >> $O/r/sanitizer-$V.txt
tally $O/r/sanitizer-$V.txt
pack
echo "checks done at $SECONDS s"
for spec in bf16:yes:2048:1200 fp16:yes:2048:1200 fp16:yes:8192:300; do
  IFS=: read -r dt c s n <<< "$spec"; t0=$SECONDS
  vs=pm64,rr64; [ $dt = fp16 ] && vs=pm64h,rr64h
  timeout 75 python3 bench/ab_steady.py --bin-dir $B --variants $vs --peer sdpa_cudnn --case 64:$c:$s \
    --iters $n --rounds 3 --dtype $dt --out $O/r/ab64-$dt-$c$s.md > $O/r/ab64-$dt-$c$s.log 2>&1
  echo "ab d64 $dt causal=$c $s rc=$? ($((SECONDS - t0)) s)"; grep "^| 64" $O/r/ab64-$dt-$c$s.md
  pack
  [ $SECONDS -gt 110 ] && break
done
pack && rm -rf $O/r
