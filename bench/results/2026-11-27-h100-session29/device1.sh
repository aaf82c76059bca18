#!/usr/bin/env bash
# Session 29, call 1: the forward's tile counter kept zero by its kernel (atomicInc wraps at the
# launch's last claim) and given as Workspace::zeroed, so the launcher skips its 4-byte
# cudaMemsetAsync before each launch. One CLI build (`zr`, bf16 d 64/128/256) run two ways:
# `--fwd-workspace yes` (the reset before each launch, as main) and `--fwd-workspace zeroed`.
# fp64 checks with the zeroed workspace (each run also compares a last launch's out with the
# first's bit for bit and reads the workspace back as zero), then A/B at the steady state beside
# cuDNN, then per-call timing with the L2 flush (bench.py's method) at the short rows.
O=${OUT:-gpu-out}; mkdir -p $O/r
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,power.limit --format=csv > $O/r/gpu.txt
B=build/zr/apps/flashcute
mkdir -p ab-bin/base ab-bin/zeroed
cp $B ab-bin/base/; cp $B ab-bin/zeroed/
echo "--fwd-workspace yes" > ab-bin/base/args; echo "--fwd-workspace zeroed" > ab-bin/zeroed/args
run() { out=$(timeout 60 $B run --dtype bf16 --check-heads 2 --iters 20 "$@" 2>&1); echo "rc=$? $* :: $(echo "$out" | grep -i -E 'max|err|check|repeat|TFLOP' | tr '\n' ' ' | cut -c1-400)"; }
{ for d in 64 128 256; do
    run --backend sm90 --d $d --batch 16 --heads 16 --seqlen 512 --fwd-workspace zeroed
    run --backend sm90 --d $d --batch 8 --heads 16 --seqlen 1024 --causal --fwd-workspace zeroed
    run --backend sm90 --d $d --batch 4 --heads 8 --seqlen 2000 --causal --fwd-workspace zeroed
    run --backend sm90 --d $d --batch 3 --heads 8 --heads-kv 2 --seqlen-q 700 --seqlen-k 1500 --fwd-workspace zeroed
    run --backend sm90 --d $d --batch 2 --heads 8 --seqlen 3000 --fwd-workspace yes
  done
  run --backend sm80 --d 128 --batch 2 --heads 8 --seqlen 1000 --causal --fwd-workspace zeroed; } > $O/r/checks-zr.txt 2>&1
grep -c '^rc=0' $O/r/checks-zr.txt; grep '^rc=' $O/r/checks-zr.txt | grep -v '^rc=0' | cut -c1-300 | head -5
grep -c 'equals the first' $O/r/checks-zr.txt; grep -c 'zeroed workspace reads zero' $O/r/checks-zr.txt
# Per-call timing with the L2 flush (events around each call, as bench.py), alternating, 3 rounds.
for r in 1 2 3; do for m in yes zeroed; do
  timeout 60 $B bench --dtype bf16 --d 64,128,256 --seqlen 512,1024 --causal both --pass fwd --backend sm90 \
    --warmup 5 --iters 200 --fwd-workspace $m --csv $O/r/flush-$m-$r.csv > /dev/null 2>&1; echo "flush $m $r rc=$?"
done; done
timeout 300 python3 bench/ab_steady.py --bin-dir ab-bin --variants base,zeroed --peer sdpa_cudnn \
  --case 128:no:512 --case 128:yes:512 --case 128:no:1024 --case 128:no:2048 --case 64:no:512 --case 256:no:512 \
  --iters 500 --rounds 2 --out $O/r/ab-zr.md > $O/r/ab-zr.log 2>&1
echo "ab rc=$?"; tail -12 $O/r/ab-zr.md
tar czf $O/r.tgz -C $O r
