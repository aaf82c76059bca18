#!/usr/bin/env bash
# Session 44, call 1 (H200): bf16 + fp16 d 128 CLI builds made on the CPU machine, carried gzipped in
# .abcarry/: base (main's kernels) and half (-DFLASHCUTE_SM90_FWD_HALF_FIRST=1: a warpgroup's first
# key block as a 64-column S where its rows see none of the block's second half). fp64 checks and
# compute-sanitizer of half, then ab_steady of the two against cuDNN on d 128's causal rows.
O=${OUT:-gpu-out}; mkdir -p $O/r
source bench/device_lib.sh
B=build/abbin
for v in base half; do mkdir -p $B/$v && gunzip -c .abcarry/$v.gz > $B/$v/flashcute && chmod +x $B/$v/flashcute; done
bins base half > $O/r/bins.txt; cat $O/r/bins.txt
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt; cat $O/r/gpu.txt
pack() { sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*.md $O/r/*.txt $O/r/*.log 2>/dev/null; tar czf $O/r.tgz -C $O r; }
t0=$SECONDS
V=half
{ chk_std 128
  chk 128 "--seqlen 512 --causal --fwd-workspace yes" "--seqlen 1024 --causal --fwd-workspace yes" \
    "--seqlen 2048 --causal --fwd-workspace yes" "--seqlen 4096 --causal --fwd-workspace yes" \
    "--seqlen 777 --causal --fwd-workspace yes" "--seqlen 1000 --causal --fwd-workspace zeroed" \
    "--seqlen-q 1000 --seqlen-k 1100 --causal --fwd-workspace yes" "--seqlen-q 1100 --seqlen-k 1000 --causal --fwd-workspace yes" \
    "--seqlen-q 64 --seqlen-k 1000 --causal --fwd-workspace yes" "--seqlen 1500 --window-left 200 --window-right 0 --fwd-workspace yes" \
    "--seqlen 900 --window-left 30 --window-right 10 --fwd-workspace yes" "--seqlen 2048 --causal --scale 30 --fwd-workspace yes" \
    "--seqlen 1024 --causal --heads-kv 1 --fwd-workspace yes" "--seqlen 1500 --causal --batch 3 --heads 5 --fwd-workspace yes"
  V=half; chk 128 "--seqlen 1024 --causal --fwd-workspace yes --dtype fp16" "--seqlen 3000 --causal --fwd-workspace yes --dtype fp16"
} > $O/r/checks.txt 2>&1
tally $O/r/checks.txt; echo "checks $((SECONDS - t0)) s"
pack
for dt in bf16 fp16; do
  [ $dt = fp16 ] && { t0=$SECONDS
  { san racecheck 128 --batch 2 --heads 4 --seqlen 1000 --causal --fwd-workspace yes
    san synccheck 128 --batch 2 --heads 4 --seqlen 1000 --causal --fwd-workspace yes
    san memcheck 128 --batch 2 --heads 4 --seqlen 1000 --causal --fwd-workspace yes
    san initcheck 128 --batch 2 --heads 4 --seqlen 700 --causal --fwd-workspace yes
  } > $O/r/sanitizer.txt 2>&1
  tally $O/r/sanitizer.txt; echo "sanitizer $((SECONDS - t0)) s"
  pack; }
  [ $SECONDS -gt 420 ] && { echo "skip ab $dt (time)"; continue; }
  t0=$SECONDS
  timeout 170 python3 bench/ab_steady.py --bin-dir $B --variants base,half --peer sdpa_cudnn \
    --case 128:yes:512 --case 128:yes:1024 --case 128:yes:2048 --case 128:yes:4096 --case 128:no:1024 \
    --iters 500 --rounds $([ $dt = bf16 ] && echo 3 || echo 2) --dtype $dt --out $O/r/ab-$dt.md > $O/r/ab-$dt.log 2>&1
  echo "ab $dt rc=$? ($((SECONDS - t0)) s)"; cat $O/r/ab-$dt.md 2>/dev/null | head -30
  pack
done
pack && rm -rf $O/r
