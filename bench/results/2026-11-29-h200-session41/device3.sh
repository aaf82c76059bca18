#!/usr/bin/env bash
# Session 41, call 3 (H200): Q's wgmma descriptors from lane 0's thread index
# (FLASHCUTE_SM90_FWD_UNIFORM_Q_DESC; not in the d 256 cluster kernel). CLI builds made on the CPU
# machine (bf16, d 64 / 128 / 256, sm_90a): build/ab40bin/uni2 (session 40's build: main's kernels,
# SASS-identical), build/ab41bin/uq (this change). ab_steady side by side and compute-sanitizer on uq (its
# fp64 checks: scripts/gpu-check on the landed tree, the next call).
O=${OUT:-gpu-out}; mkdir -p $O/r
source bench/device_lib.sh
B=build/abbin
mkdir -p $B/ref $B/uq && cp build/ab40bin/uni2/flashcute $B/ref/ && cp build/ab41bin/uq/flashcute $B/uq/
bins ref uq > $O/r/bins.txt; cat $O/r/bins.txt
V=uq
{ san racecheck 128 --batch 2 --heads 16 --seqlen 2000 --fwd-workspace yes
  san synccheck 64 --batch 2 --heads 16 --seqlen 700 --causal --fwd-workspace yes
  san racecheck 256 --batch 2 --heads 8 --seqlen 1500 --causal --fwd-workspace yes; } > $O/r/sanitizer.txt 2>&1
cut -c1-200 $O/r/sanitizer.txt
t0=$SECONDS
timeout 190 python3 bench/ab_steady.py --bin-dir $B --variants ref,uq --case 128:no:512 --case 128:no:2048 \
  --case 128:yes:2048 --case 64:no:2048 --case 64:yes:1024 --case 256:no:2048 --iters 600 --rounds 3 --out $O/r/ab.md > $O/r/ab.log 2>&1
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat $O/r/ab.md
tar czf $O/r.tgz -C $O r && rm -rf $O/r
