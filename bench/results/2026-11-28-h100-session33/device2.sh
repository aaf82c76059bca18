#!/usr/bin/env bash
# Session 33, call 2: which part of the tail pays where. Call 1's `var` (rows + WAR early) lost 1-3%
# on d 128 (ping-pong) and gained 2% on d 256 and d 64's four-warpgroup short tiles (no ping-pong).
# `war` (EARLY_ROWS=0, EARLY_WAR=1) and `rows` (EARLY_ROWS=1, EARLY_WAR=0) against `base` (both 0)
# and `var` (both 1), same tree (d917eb2), CLI builds made on the CPU machine, bf16 d 64 + 128 + 256.
O=${OUT:-gpu-out}; mkdir -p $O/r
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
for v in base var war rows; do echo "--fwd-workspace zeroed" > build/ab33/$v/args; done
for v in war rows; do
  b=build/ab33/$v/flashcute; t0=$SECONDS
  DIMS="64 256" timeout 60 bash bench/results/2026-11-27-h100-session23/checks.sh $b > $O/r/checks23-$v.log 2>&1
  echo "checks23 $v rc=$? $(grep -c '^rc=0' $O/r/checks23-$v.log) pass ($((SECONDS - t0)) s)"
done
t0=$SECONDS
timeout 480 python3 bench/ab_steady.py --bin-dir build/ab33 --variants base,var,war,rows \
  --case 256:yes:512 --case 256:yes:1024 --case 256:no:512 --case 256:no:1024 --case 256:yes:2048 \
  --case 64:no:512 --case 64:no:1024 --case 128:no:512 \
  --iters 600 --rounds 2 --out $O/r/ab-parts.md > $O/r/ab-parts.log 2>&1
echo "ab rc=$? ($((SECONDS - t0)) s)"; tail -10 $O/r/ab-parts.md
cd $O && tar czf r.tgz r && rm -rf r
