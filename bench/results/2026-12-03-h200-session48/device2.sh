#!/usr/bin/env bash
# Session 48, call 2 (H200): d 256 with the early Q release (FLASHCUTE_SM90_FWD_EARLY_Q=1: the masked
# short tiles free Q's space after a tile's last S = Q K^T, beside O's split buffer) and with the
# fast tile decode (FLASHCUTE_SM90_FWD_FAST_DECODE=1), against main's d 256 kernels (base256); bf16
# CLI builds from the CPU machine (build/vbin/<variant>). ab_steady with cuDNN in the same rounds,
# then fp64 checks and compute-sanitizer of the variants.
O=${OUT:-gpu-out}; mkdir -p $O/r
source bench/device_lib.sh
B=build/vbin
VS=${VS:-eq256,fd256}
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
bins base256 ${VS//,/ } > $O/r/bins.txt
pack() { sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*.md $O/r/*.log $O/r/*.txt 2>/dev/null; tar czf $O/r.tgz -C $O r; }
for ci in yes:512:5000 yes:1024:2500 yes:2048:1200 no:512:5000 no:1024:2500; do
  c=${ci%%:*}; r=${ci#*:}; s=${r%:*}; n=${r#*:}; t0=$SECONDS
  [ $SECONDS -gt 330 ] && { echo "skip d256 $ci (time)"; continue; }
  timeout 110 python3 bench/ab_steady.py --bin-dir $B --variants base256,$VS --peer sdpa_cudnn --case 256:$c:$s \
    --iters $n --rounds 3 --dtype bf16 --out $O/r/ab256-bf16-$c$s.md > $O/r/ab256-bf16-$c$s.log 2>&1
  echo "ab d256 causal=$c $s rc=$? ($((SECONDS - t0)) s)"; grep "^| 256" $O/r/ab256-bf16-$c$s.md
  pack
done
for V in ${VS//,/ }; do
  [ $SECONDS -gt 480 ] && { echo "skip checks $V (time)"; continue; }
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
  pack
done
pack && rm -rf $O/r
