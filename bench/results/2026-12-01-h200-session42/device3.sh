#!/usr/bin/env bash
# Session 42, call 3 (H200): bf16 CLI builds (d 64 / 128 / 256, sm_90a) made on the CPU machine,
# carried gzipped in .abcarry/: base (main's head), dyn (-DFLASHCUTE_SM90_FWD_DYNAMIC=1: the persistent
# kernel with the dynamic tile scheduler at every length, given a workspace), uq
# (-DFLASHCUTE_SM90_FWD_UNIFORM_Q_DESC=1: Q's uniform wgmma descriptors at every head dim but the
# cluster kernel). fp64 checks and compute-sanitizer on dyn at the lengths it newly reaches, then
# ab_steady of the three side by side.
O=${OUT:-gpu-out}; mkdir -p $O/r
source bench/device_lib.sh
B=build/abbin
for v in base dyn uq; do mkdir -p $B/$v && gunzip -c .abcarry/$v.gz > $B/$v/flashcute && chmod +x $B/$v/flashcute; done
bins base dyn uq > $O/r/bins.txt; cat $O/r/bins.txt
V=dyn
{ chk 64 "--seqlen 4096 --fwd-workspace yes" "--seqlen 5000 --fwd-workspace yes" "--seqlen 3001 --heads-kv 2 --fwd-workspace yes" \
    "--seqlen 8192 --batch 1 --heads 8 --fwd-workspace yes" "--seqlen-q 3000 --seqlen-k 5000 --fwd-workspace yes" \
    "--seqlen 4500 --causal --fwd-workspace yes" "--seqlen 20000 --batch 1 --heads 4 --causal --fwd-workspace yes"
  chk 128 "--seqlen 5000 --fwd-workspace yes" "--seqlen 8192 --batch 1 --heads 8 --fwd-workspace yes" \
    "--seqlen 6000 --causal --fwd-workspace yes" "--seqlen-q 4500 --seqlen-k 6000 --fwd-workspace yes"
  chk 256 "--seqlen 5000 --fwd-workspace yes" "--seqlen 4097 --fwd-workspace yes" "--seqlen 6000 --causal --fwd-workspace yes"
  V=uq
  chk 256 "--seqlen 2000 --fwd-workspace yes" "--seqlen 700 --causal --fwd-workspace yes" "--seqlen 5000 --fwd-workspace yes" \
    "--seqlen 3000 --causal --fwd-workspace no" "--seqlen 800 --softcap 30 --fwd-workspace yes"
  chk 64 "--seqlen 2000 --fwd-workspace yes" "--seqlen 700 --causal --fwd-workspace yes" "--seqlen 5000" "--seqlen 500 --fwd-workspace yes"
} > $O/r/checks.txt 2>&1
tally $O/r/checks.txt
V=dyn
{ san racecheck 64 --batch 2 --heads 8 --seqlen 3000 --fwd-workspace yes
  san synccheck 128 --batch 1 --heads 8 --seqlen 5000 --fwd-workspace yes; } > $O/r/sanitizer.txt 2>&1
cut -c1-220 $O/r/sanitizer.txt
t0=$SECONDS
timeout 300 python3 bench/ab_steady.py --bin-dir $B --variants base,dyn,uq --case 64:no:4096 --case 64:no:8192 \
  --case 128:no:8192 --case 256:no:2048 --case 256:yes:2048 --case 256:no:8192 --iters 700 --rounds 2 --out $O/r/ab.md > $O/r/ab.log 2>&1
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat $O/r/ab.md
sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*
tar czf $O/r.tgz -C $O r && rm -rf $O/r
