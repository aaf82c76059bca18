#!/usr/bin/env bash
# Session 32, call 2: d 256's masked short tiles (64-key step, O in two column chunks) for more
# problems: `wide` = FLASHCUTE_SM90_FWD_D256_SHORT_MASKED_MAX=16384 (causal / windowed up to 16k keys)
# and _D256_SHORT_FULL_MAX=4096 (non-causal up to 4k where the clusters do not take them), against
# this tree's defaults (`base`: 4096 and 512; build s32v, bf16 d 64 + d 256; wide: build s32w, bf16
# d 256). fp64 checks of wide, then ab_steady (800 launches, 2 rounds, zeroed workspace).
O=${OUT:-gpu-out}; mkdir -p $O/r
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
for v in base wide; do echo "--fwd-workspace zeroed" > build/ab41/$v/args; done
b=build/ab41/wide/flashcute; fail=0
run() { out=$(timeout 60 "$b" run --dtype bf16 --check-heads ${CH:-3} --iters 3 "$@" 2>&1); rc=$?; echo "rc=$rc $* :: $(echo "$out" | grep -i -E 'max|err|check|TFLOP|support' | tr '\n' ' ' | cut -c1-300)"; [[ $rc == 0 ]] || fail=1; }
t0=$SECONDS
{
for ws in yes no zeroed; do
  CH=1 run --backend sm90 --d 256 --batch 1 --heads 4 --seqlen 6000 --causal --fwd-workspace $ws
  run --backend sm90 --d 256 --batch 2 --heads 8 --seqlen 1500 --fwd-workspace $ws
  run --backend sm90 --d 256 --batch 2 --heads 8 --seqlen 3000 --fwd-workspace $ws
done
CH=1 run --backend sm90 --d 256 --batch 1 --heads 4 --seqlen 8192 --causal --fwd-workspace yes
CH=1 run --backend sm90 --d 256 --batch 1 --heads 4 --heads-kv 2 --seqlen-q 5000 --seqlen-k 7000 --causal --fwd-workspace no
run --backend sm90 --d 256 --batch 2 --heads 8 --seqlen 5000 --window-left 500 --window-right 100 --fwd-workspace yes
run --backend sm90 --d 256 --batch 3 --heads 8 --seqlen-q 1000 --seqlen-k 2500 --fwd-workspace yes
run --backend sm90 --d 256 --dv 136 --batch 2 --heads 8 --seqlen 2100 --fwd-workspace no
run --backend sm90 --d 256 --batch 2 --heads 8 --seqlen 4096 --fwd-workspace yes
} > $O/r/checks-wide.log 2>&1
echo "checks wide fail=$fail: $(grep -c '^rc=0' $O/r/checks-wide.log) pass ($((SECONDS - t0)) s)"; grep -v "^rc=0" $O/r/checks-wide.log | head -5
t0=$SECONDS
timeout 330 python3 bench/ab_steady.py --bin-dir build/ab41 --variants base,wide \
  --case 256:yes:8192 --case 256:yes:16384 --case 256:no:1024 --case 256:no:2048 --case 256:yes:2048 \
  --iters 800 --rounds 2 --out $O/r/ab-wide.md > $O/r/ab-wide.log 2>&1
echo "ab rc=$? ($((SECONDS - t0)) s)"; tail -7 $O/r/ab-wide.md
cd $O && tar czf r.tgz r && rm -rf r
