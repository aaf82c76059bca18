#!/usr/bin/env bash
# Session 45, call 1: d 64's masked short tiles (causal / windowed plain problems up to 1k keys) with
# three consumer warpgroups on 192 x 64 tiles (160 registers each) and Q in registers (w3q: S = Q K^T
# by RS wgmma, only K read from smem), against main's four warpgroups on 256 x 64 tiles with Q from
# smem (base) and three warpgroups with Q from smem (w3). bf16 CLI builds of d 64 from the CPU
# machine (build/ab45/<variant>/flashcute): fp64 checks and compute-sanitizer of w3q, then ab_steady
# with cuDNN in the same rounds at causal 512 / 1k (5000 / 2500 launches, 3 rounds); w3q2k (w3q up to
# 2k keys instead of 1k) against base at causal 2k (1200 launches, 3 rounds).
O=${OUT:-gpu-out}; mkdir -p $O/r
source bench/device_lib.sh
B=build/ab45
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
bins base w3 w3q w3q2k > $O/r/bins.txt
pack() { sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*.md $O/r/*.log $O/r/*.txt 2>/dev/null; tar czf $O/r.tgz -C $O r; }
V=w3q
chk_std 64 > $O/r/checks-w3q.txt
chk 64 "--seqlen 1024 --causal --fwd-workspace yes" "--seqlen 1024 --causal --fwd-workspace no" \
  "--seqlen 300 --causal --fwd-workspace yes" "--seqlen 257 --causal --fwd-workspace no" \
  "--seqlen-q 64 --seqlen-k 1000 --causal --fwd-workspace yes" "--seqlen-q 1000 --seqlen-k 300 --causal --fwd-workspace yes" \
  "--seqlen-q 300 --seqlen-k 1000 --causal --fwd-workspace no" \
  "--seqlen 800 --window-left 100 --window-right 50 --fwd-workspace yes" \
  "--seqlen 900 --window-left 64 --window-right 0 --fwd-workspace no" "--seqlen 1000 --causal --heads-kv 1 --fwd-workspace yes" \
  "--seqlen 1000 --causal --heads-kv 4 --fwd-workspace no" "--seqlen 900 --causal --batch 3 --heads 5 --fwd-workspace yes" \
  "--seqlen 512 --causal --scale 30 --fwd-workspace yes" "--seqlen 1 --causal --fwd-workspace yes" >> $O/r/checks-w3q.txt
tally $O/r/checks-w3q.txt
for tool in racecheck synccheck memcheck initcheck; do
  san $tool 64 --batch 2 --heads 40 --seqlen 512 --causal --fwd-workspace yes >> $O/r/sanitizer-w3q.txt
done
san memcheck 64 --batch 3 --heads 7 --seqlen 700 --window-left 100 --window-right 20 --fwd-workspace no >> $O/r/sanitizer-w3q.txt
san racecheck 64 --batch 3 --heads 7 --seqlen 1000 --causal --fwd-workspace no >> $O/r/sanitizer-w3q.txt
tally $O/r/sanitizer-w3q.txt
pack
for ci in 512:5000 1024:2500; do
  s=${ci%:*}; n=${ci#*:}; t0=$SECONDS
  timeout 200 python3 bench/ab_steady.py --bin-dir $B --variants base,w3,w3q --peer sdpa_cudnn --case 64:yes:$s \
    --iters $n --rounds 3 --dtype bf16 --out $O/r/ab-bf16-c$s.md > $O/r/ab-bf16-c$s.log 2>&1
  echo "ab causal $s rc=$? ($((SECONDS - t0)) s)"; grep "^| 64" $O/r/ab-bf16-c$s.md
  pack
done
V=w3q2k; chk 64 "--seqlen 2048 --causal --fwd-workspace yes" "--seqlen 1900 --causal --fwd-workspace no" \
  "--seqlen-q 2000 --seqlen-k 1500 --causal --fwd-workspace yes" "--seqlen 2000 --window-left 300 --window-right 10" > $O/r/checks-w3q2k.txt
tally $O/r/checks-w3q2k.txt
t0=$SECONDS
timeout 150 python3 bench/ab_steady.py --bin-dir $B --variants base,w3q2k --peer sdpa_cudnn --case 64:yes:2048 \
  --iters 1200 --rounds 3 --dtype bf16 --out $O/r/ab-bf16-c2048.md > $O/r/ab-bf16-c2048.log 2>&1
echo "ab causal 2048 rc=$? ($((SECONDS - t0)) s)"; grep "^| 64" $O/r/ab-bf16-c2048.md
pack && rm -rf $O/r
