#!/usr/bin/env bash
# Session 47, call 1 (H200): the skipped key blocks' stages freed by per-warp arrivals, no warpgroup
# barrier (FLASHCUTE_SM90_FWD_SKIP_WARP=1): skipw on d 64's short tiles against main's form (base);
# wr256 on d 256's masked short tiles (with one release per warpgroup there,
# FLASHCUTE_SM90_FWD_SHORT_WG_RELEASE=1, which needs it) against main's (base256). bf16 CLI builds
# from the CPU machine (build/vbin/<variant>): fp64 checks and compute-sanitizer of each variant,
# then ab_steady with cuDNN in the same rounds.
O=${OUT:-gpu-out}; mkdir -p $O/r
source bench/device_lib.sh
B=build/vbin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
bins base skipw base256 wr256 > $O/r/bins.txt
pack() { sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*.md $O/r/*.log $O/r/*.txt 2>/dev/null; tar czf $O/r.tgz -C $O r; }
for V in skipw; do
  chk_std 64 > $O/r/checks-$V.txt
  chk 64 "--seqlen 1024 --causal --fwd-workspace yes" "--seqlen 1024 --causal --fwd-workspace no" \
    "--seqlen 300 --causal --fwd-workspace yes" "--seqlen 257 --causal --fwd-workspace no" \
    "--seqlen-q 64 --seqlen-k 1000 --causal --fwd-workspace yes" "--seqlen-q 1000 --seqlen-k 300 --causal --fwd-workspace yes" \
    "--seqlen-q 300 --seqlen-k 1000 --causal --fwd-workspace no" \
    "--seqlen 800 --window-left 100 --window-right 50 --fwd-workspace yes" \
    "--seqlen 900 --window-left 64 --window-right 0 --fwd-workspace no" "--seqlen 1000 --causal --heads-kv 1 --fwd-workspace yes" \
    "--seqlen 1000 --causal --heads-kv 4 --fwd-workspace no" "--seqlen 900 --causal --batch 3 --heads 5 --fwd-workspace yes" \
    "--seqlen 512 --causal --scale 30 --fwd-workspace yes" "--seqlen 1 --causal --fwd-workspace yes" \
    "--seqlen-q 1000 --seqlen-k 100 --causal --fwd-workspace yes" "--seqlen 1000 --window-left 0 --window-right 0 --fwd-workspace yes" \
    "--seqlen 512 --fwd-workspace yes" "--seqlen 1000 --fwd-workspace yes" "--seqlen 700 --fwd-workspace no" >> $O/r/checks-$V.txt
  tally $O/r/checks-$V.txt
  for tool in racecheck synccheck memcheck initcheck; do
    san $tool 64 --batch 2 --heads 40 --seqlen 512 --causal --fwd-workspace yes >> $O/r/sanitizer-$V.txt
  done
  san memcheck 64 --batch 3 --heads 7 --seqlen 700 --window-left 100 --window-right 20 --fwd-workspace no >> $O/r/sanitizer-$V.txt
  san racecheck 64 --batch 3 --heads 7 --seqlen 1000 --causal --fwd-workspace no >> $O/r/sanitizer-$V.txt
  san synccheck 64 --batch 2 --heads 9 --seqlen-q 1000 --seqlen-k 100 --causal --fwd-workspace yes >> $O/r/sanitizer-$V.txt
  tally $O/r/sanitizer-$V.txt
done
for V in wr256; do
  chk 256 "--seqlen 512 --causal --fwd-workspace yes" "--seqlen 700 --causal --fwd-workspace yes" \
    "--seqlen 1000 --causal --fwd-workspace no" "--seqlen 2000 --causal --fwd-workspace yes" \
    "--seqlen 4000 --causal --fwd-workspace yes" "--seqlen 257 --causal --fwd-workspace no" \
    "--seqlen 512 --fwd-workspace yes" "--seqlen 1000 --fwd-workspace no" "--seqlen 2048 --fwd-workspace yes" \
    "--seqlen-q 64 --seqlen-k 1000 --causal --fwd-workspace yes" "--seqlen-q 1000 --seqlen-k 300 --causal --fwd-workspace yes" \
    "--seqlen-q 300 --seqlen-k 1000 --causal --fwd-workspace no" "--seqlen-q 1000 --seqlen-k 100 --causal --fwd-workspace yes" \
    "--seqlen 800 --window-left 100 --window-right 50 --fwd-workspace yes" \
    "--seqlen 900 --window-left 64 --window-right 0 --fwd-workspace no" "--seqlen 1000 --causal --heads-kv 1 --fwd-workspace yes" \
    "--seqlen 900 --causal --batch 3 --heads 5 --fwd-workspace yes" "--seqlen 512 --causal --scale 30 --fwd-workspace yes" \
    "--seqlen 1 --causal --fwd-workspace yes" "--seqlen 800 --causal --softcap 30 --fwd-workspace yes" > $O/r/checks-$V.txt
  tally $O/r/checks-$V.txt
  for tool in racecheck synccheck memcheck initcheck; do
    san $tool 256 --batch 2 --heads 8 --seqlen 700 --causal --fwd-workspace yes >> $O/r/sanitizer-$V.txt
  done
  san racecheck 256 --batch 2 --heads 9 --seqlen-q 1000 --seqlen-k 100 --causal --fwd-workspace no >> $O/r/sanitizer-$V.txt
  san synccheck 256 --batch 3 --heads 5 --seqlen 1000 --window-left 100 --window-right 20 --fwd-workspace yes >> $O/r/sanitizer-$V.txt
  tally $O/r/sanitizer-$V.txt
done
pack
for ci in yes:512:5000 yes:1024:2500 no:512:5000; do
  c=${ci%%:*}; r=${ci#*:}; s=${r%:*}; n=${r#*:}; t0=$SECONDS
  [ $SECONDS -gt 400 ] && { echo "skip $ci (time)"; continue; }
  timeout 120 python3 bench/ab_steady.py --bin-dir $B --variants base,skipw --peer sdpa_cudnn --case 64:$c:$s \
    --iters $n --rounds 3 --dtype bf16 --out $O/r/ab-bf16-$c$s.md > $O/r/ab-bf16-$c$s.log 2>&1
  echo "ab causal=$c $s rc=$? ($((SECONDS - t0)) s)"; grep "^| 64" $O/r/ab-bf16-$c$s.md
  pack
done
for ci in yes:512:5000 yes:1024:2500 no:1024:2500; do
  c=${ci%%:*}; r=${ci#*:}; s=${r%:*}; n=${r#*:}; t0=$SECONDS
  [ $SECONDS -gt 520 ] && { echo "skip d256 $ci (time)"; continue; }
  timeout 120 python3 bench/ab_steady.py --bin-dir $B --variants base256,wr256 --peer sdpa_cudnn --case 256:$c:$s \
    --iters $n --rounds 3 --dtype bf16 --out $O/r/ab256-bf16-$c$s.md > $O/r/ab256-bf16-$c$s.log 2>&1
  echo "ab d256 causal=$c $s rc=$? ($((SECONDS - t0)) s)"; grep "^| 256" $O/r/ab256-bf16-$c$s.md
  pack
done
pack && rm -rf $O/r
