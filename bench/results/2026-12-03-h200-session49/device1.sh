#!/usr/bin/env bash
# Session 49, call 1 (H200): d 64's masked kernel with its first key block in 64-key parts
# (FLASHCUTE_SM90_FWD_DIAG_PARTS=1: dp64) against main's d 64 kernels (base64), bf16; then d 256's
# early Q release + fast decode together (eqfd256, bf16; eqfd256h, fp16) and the fast decode alone
# in fp16 (fd256h) against main's (base256, base256h). CLI builds from the CPU machine, carried as
# one xz tarball (build/vbin.tar.xz). ab_steady with cuDNN in the same rounds; fp64 checks and
# compute-sanitizer of dp64.
O=${OUT:-gpu-out}; mkdir -p $O/r
tar xJf build/vbin.tar.xz -C build
source bench/device_lib.sh
B=build/vbin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
bins base64 dp64 base256 eqfd256 base256h eqfd256h fd256h > $O/r/bins.txt
pack() { sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*.md $O/r/*.log $O/r/*.txt 2>/dev/null; tar czf $O/r.tgz -C $O r; }
V=dp64
chk_std 64 > $O/r/checks-dp64.txt
chk 64 "--seqlen 1500 --causal --fwd-workspace yes" "--seqlen 4100 --causal --fwd-workspace no" \
  "--seqlen-q 1500 --seqlen-k 3000 --causal --fwd-workspace yes" "--seqlen-q 3000 --seqlen-k 1500 --causal --fwd-workspace yes" \
  "--seqlen-q 2000 --seqlen-k 130 --causal --fwd-workspace no" "--seqlen 3000 --window-left 300 --window-right 100 --fwd-workspace yes" \
  "--seqlen 2500 --window-left 0 --window-right 0 --fwd-workspace yes" "--seqlen 2200 --causal --heads-kv 1 --fwd-workspace yes" \
  "--seqlen 1100 --causal --batch 3 --heads 5 --fwd-workspace no" "--seqlen 2000 --causal --scale 30 --fwd-workspace yes" \
  "--seqlen 9000 --causal --batch 1 --heads 8" >> $O/r/checks-dp64.txt
tally $O/r/checks-dp64.txt
for tool in racecheck synccheck memcheck initcheck; do
  san $tool 64 --batch 2 --heads 8 --seqlen 3000 --causal --fwd-workspace yes >> $O/r/sanitizer-dp64.txt
done
san memcheck 64 --batch 2 --heads 6 --seqlen-q 3000 --seqlen-k 1500 --causal --fwd-workspace no >> $O/r/sanitizer-dp64.txt
san racecheck 64 --batch 2 --heads 6 --seqlen 2500 --window-left 200 --window-right 30 --fwd-workspace yes >> $O/r/sanitizer-dp64.txt
tally $O/r/sanitizer-dp64.txt
pack
echo "checks done at $SECONDS s"
for ci in yes:2048:1200 yes:4096:500 yes:8192:200; do
  c=${ci%%:*}; r=${ci#*:}; s=${r%:*}; n=${r#*:}; t0=$SECONDS
  timeout 120 python3 bench/ab_steady.py --bin-dir $B --variants base64,dp64 --peer sdpa_cudnn --case 64:$c:$s \
    --iters $n --rounds 3 --dtype bf16 --out $O/r/ab64-bf16-$c$s.md > $O/r/ab64-bf16-$c$s.log 2>&1
  echo "ab d64 causal=$c $s rc=$? ($((SECONDS - t0)) s)"; grep "^| 64" $O/r/ab64-bf16-$c$s.md
  pack
done
for spec in bf16:base256,eqfd256:yes:512:5000 bf16:base256,eqfd256:yes:1024:2500 fp16:base256h,eqfd256h,fd256h:yes:512:5000 \
            fp16:base256h,eqfd256h,fd256h:yes:1024:2500 fp16:base256h,eqfd256h,fd256h:no:512:5000; do
  IFS=: read -r dt vs c s n <<< "$spec"; t0=$SECONDS
  [ $SECONDS -gt 500 ] && { echo "skip d256 $spec (time)"; continue; }
  timeout 100 python3 bench/ab_steady.py --bin-dir $B --variants $vs --peer sdpa_cudnn --case 256:$c:$s \
    --iters $n --rounds 3 --dtype $dt --out $O/r/ab256-$dt-$c$s.md > $O/r/ab256-$dt-$c$s.log 2>&1
  echo "ab d256 $dt causal=$c $s rc=$? ($((SECONDS - t0)) s)"; grep "^| 256" $O/r/ab256-$dt-$c$s.md
  pack
done
pack && rm -rf $O/r
