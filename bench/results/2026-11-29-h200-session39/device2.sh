#!/usr/bin/env bash
# Session 39, call 2 (H200): O's TMA store per warp in d 128's ping-pong kernels only (the row's
# warp_store; `ws2`: -DFLASHCUTE_SM90_FWD_WARP_STORE=1, d 128 only) against call 1's `base`, 3 rounds.
# d 128 causal 512 runs the masked short tiles (no ping-pong), which ws2 leaves as they are: a control.
O=${OUT:-gpu-out}/r; mkdir -p $O
source bench/device_lib.sh
B=build/ab39bin
bins base ws2 | tee $O/bins.txt
V=ws2
{
  san racecheck 128 --batch 4 --heads 32 --seqlen 900 --fwd-workspace yes
  san synccheck 128 --batch 4 --heads 32 --seqlen 2000 --causal --fwd-workspace yes
  san racecheck 128 --batch 1 --heads 8 --seqlen 4500 --fwd-workspace no
  san memcheck 128 --batch 2 --heads 8 --seqlen 1000 --softcap 20 --fwd-workspace yes
} > $O/sanitizer-ws2.txt 2>&1
chk_std 128 > $O/checks-ws2.txt 2>&1
for f in $O/sanitizer-*.txt $O/checks-*.txt; do tally $f; done
t0=$SECONDS
timeout 400 python3 bench/ab_steady.py --bin-dir $B --variants base,ws2 \
  --case 128:no:512 --case 128:no:1024 --case 128:no:2048 --case 128:no:4096 --case 128:no:8192 \
  --case 128:yes:512 --case 128:yes:1024 --case 128:yes:2048 --iters 600 --rounds 3 --out $O/ab.md > $O/ab.log 2>&1
echo "ab rc=$? ($((SECONDS - t0)) s)"; tail -10 $O/ab.md
cd $O/.. && tar czf r.tgz r && rm -rf r
