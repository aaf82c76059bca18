#!/usr/bin/env bash
# Session 52, call 2 (H200): d 64's row sums from the tensor cores (FLASHCUTE_SM90_FWD_TENSOR_SUM=1:
# P V as a 64 x 72 product against [V | 1], the overlapped and the plain loop; ts2, a bf16 d 64 CLI
# build with session 51's review mend) against main's kernels (pm64): fp64 checks, compute-sanitizer,
# ab_steady with cuDNN at non-causal 2k-8k and causal 2k-8k (fp16: ts2h against pm64h, two rows).
O=${OUT:-gpu-out}; mkdir -p $O/r
tar xJf build/vbin.tar.xz -C build
source bench/device_lib.sh
B=build/vbin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
bins pm64 ts2 pm64h ts2h > $O/r/bins.txt
pack() { sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*.md $O/r/*.log $O/r/*.txt 2>/dev/null; tar czf $O/r.tgz -C $O r; }
extra=("--seqlen 2048 --causal --fwd-workspace yes" "--seqlen 4096 --causal --fwd-workspace no"
  "--seqlen-q 4100 --seqlen-k 3000 --causal --fwd-workspace yes" "--seqlen-q 2048 --seqlen-k 4000 --causal --fwd-workspace yes"
  "--seqlen-q 3052 --seqlen-k 3000 --causal --fwd-workspace no" "--seqlen 3000 --causal --window-left 150 --fwd-workspace no"
  "--seqlen 8192 --causal --batch 1 --heads 8" "--seqlen 2000 --causal --softcap 30 --fwd-workspace yes" "--seqlen 1000 --causal --scale 30"
  "--seqlen 8192 --batch 1 --heads 8" "--seqlen 4096 --scale 30 --fwd-workspace yes" "--seqlen 3000 --scale 5"
  "--seqlen 4000 --heads-kv 1" "--seqlen 1500 --scale 30 --fwd-workspace zeroed" "--seqlen-q 777 --seqlen-k 3001 --fwd-workspace yes"
  "--seqlen 2100 --window-left 700 --window-right 300 --fwd-workspace yes" "--seqlen 2000 --scale 0.01")
V=ts2
chk_std 64 > $O/r/checks-$V.txt
chk 64 "${extra[@]}" >> $O/r/checks-$V.txt
tally $O/r/checks-$V.txt
for tool in racecheck synccheck memcheck initcheck; do
  san $tool 64 --batch 2 --heads 8 --seqlen 2048 --fwd-workspace yes >> $O/r/sanitizer-$V.txt
done
san racecheck 64 --batch 1 --heads 4 --seqlen 4096 --fwd-workspace no >> $O/r/sanitizer-$V.txt
san racecheck 64 --batch 2 --heads 8 --seqlen 2048 --causal --fwd-workspace yes >> $O/r/sanitizer-$V.txt
san synccheck 64 --batch 2 --heads 8 --seqlen 2048 --causal --fwd-workspace yes >> $O/r/sanitizer-$V.txt
tally $O/r/sanitizer-$V.txt
pack
echo "checks done at $SECONDS s"
for spec in bf16:no:8192:300 bf16:yes:2048:1200 bf16:no:4096:600 bf16:yes:8192:600 fp16:no:4096:600 fp16:yes:2048:1200 bf16:no:2048:1200 bf16:yes:4096:600; do
  IFS=: read -r dt c s n <<< "$spec"; t0=$SECONDS
  vs=pm64,ts2; [ $dt = fp16 ] && vs=pm64h,ts2h
  timeout 75 python3 bench/ab_steady.py --bin-dir $B --variants $vs --peer sdpa_cudnn --case 64:$c:$s \
    --iters $n --rounds 3 --dtype $dt --out $O/r/ab64-$dt-$c$s.md > $O/r/ab64-$dt-$c$s.log 2>&1
  echo "ab d64 $dt causal=$c $s rc=$? ($((SECONDS - t0)) s)"; grep "^| 64" $O/r/ab64-$dt-$c$s.md
  pack
  [ $SECONDS -gt 500 ] && break
done
pack && rm -rf $O/r
