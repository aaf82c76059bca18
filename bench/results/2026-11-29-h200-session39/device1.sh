#!/usr/bin/env bash
# Session 39, call 1 (H200): O's TMA store per consumer warp (FLASHCUTE_SM90_FWD_WARP_STORE=1, `ws`)
# and three consumer warpgroups on the plain loop at d 128 (FLASHCUTE_SM90_FWD_D128_WGS=3,
# FLASHCUTE_SM90_FWD_D128_OVERLAP=0, `w3p`) against main's kernels (`base`). CLI builds made on the
# CPU machine (bf16, sm_90a) in build/ab39bin: base and ws with d 64 and d 128, w3p with d 128.
O=${OUT:-gpu-out}/r; mkdir -p $O
source bench/device_lib.sh
B=build/ab39bin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/gpu.txt
bins base ws w3p | tee $O/bins.txt
V=ws
{
  san synccheck 128 --batch 4 --heads 32 --seqlen 1000 --fwd-workspace yes
  san racecheck 128 --batch 4 --heads 32 --seqlen 900 --fwd-workspace yes
  san memcheck 128 --batch 4 --heads 32 --seqlen 700 --causal --fwd-workspace yes
  san racecheck 128 --batch 1 --heads 8 --seqlen 4500 --fwd-workspace no
  san initcheck 128 --batch 2 --heads 16 --seqlen 1000 --fwd-workspace no
  san racecheck 64 --batch 4 --heads 32 --seqlen 2000 --fwd-workspace yes
  san synccheck 64 --batch 4 --heads 32 --seqlen 512 --causal --fwd-workspace yes
  san racecheck 64 --batch 4 --heads 32 --seqlen 700 --causal --fwd-workspace yes
} > $O/sanitizer-ws.txt 2>&1
V=w3p
{
  san racecheck 128 --batch 1 --heads 8 --seqlen 4500 --fwd-workspace no
  san synccheck 128 --batch 4 --heads 32 --seqlen 2000 --fwd-workspace yes
} > $O/sanitizer-w3p.txt 2>&1
V=ws; { chk_std 128; chk_std 64; } > $O/checks-ws.txt 2>&1
V=w3p; chk_std 128 > $O/checks-w3p.txt 2>&1
for f in $O/sanitizer-*.txt $O/checks-*.txt; do tally $f; done
cut -c1-200 $O/sanitizer-*.txt
t0=$SECONDS
timeout 250 python3 bench/ab_steady.py --bin-dir $B --variants base,ws,w3p \
  --case 128:no:512 --case 128:no:1024 --case 128:yes:512 --case 128:no:2048 --case 128:no:4096 --case 128:no:8192 \
  --case 128:yes:8192 --iters 600 --rounds 2 --out $O/ab-d128.md > $O/ab-d128.log 2>&1
echo "ab d128 rc=$? ($((SECONDS - t0)) s)"; tail -9 $O/ab-d128.md
t0=$SECONDS
timeout 120 python3 bench/ab_steady.py --bin-dir $B --variants base,ws \
  --case 64:no:512 --case 64:yes:512 --case 64:yes:1024 --case 64:no:2048 --iters 600 --rounds 2 \
  --out $O/ab-d64.md > $O/ab-d64.log 2>&1
echo "ab d64 rc=$? ($((SECONDS - t0)) s)"; tail -6 $O/ab-d64.md
