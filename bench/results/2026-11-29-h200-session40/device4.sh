#!/usr/bin/env bash
# Session 40, call 4 (H200). CLI builds (bf16, d 128, sm_90a) in build/ab40bin, made on the CPU machine:
#   base: main's kernels (call 3's base); dyn: call 3's FLASHCUTE_SM90_FWD_DYNAMIC=1 build;
#   hint: L2 policies on the TMA loads, K/V EVICT_LAST + Q EVICT_FIRST (FLASHCUTE_SM90_FWD_CACHE_HINTS=2).
# 1. hint against base (sanitizer, fp64 checks, ab_steady). 2. ncu source pages (per-instruction
# executed counts and stall samples) of the persistent (dyn) and one-CTA-per-tile (base) kernels at
# non-causal 8k: where the persistent kernel's ~10% more instructions (call 3) are.
O=${OUT:-gpu-out}; mkdir -p $O/r
source bench/device_lib.sh
B=build/ab40bin
bins base hint dyn > $O/r/bins.txt; cat $O/r/bins.txt
V=hint
{ san racecheck 128 --batch 2 --heads 16 --seqlen 2000 --fwd-workspace yes
  san synccheck 128 --batch 2 --heads 16 --seqlen 3000 --causal --fwd-workspace yes
  san memcheck 128 --batch 2 --heads 16 --seqlen 700 --causal --fwd-workspace no; } > $O/r/sanitizer.txt 2>&1
cut -c1-200 $O/r/sanitizer.txt
chk_std 128 > $O/r/checks-hint.txt 2>&1; tally $O/r/checks-hint.txt
t0=$SECONDS
timeout 150 python3 bench/ab_steady.py --bin-dir $B --variants base,hint --case 128:no:1024 --case 128:no:2048 --case 128:no:4096 \
  --case 128:no:8192 --case 128:yes:4096 --iters 600 --rounds 3 --out $O/r/ab.md > $O/r/ab.log 2>&1
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat $O/r/ab.md
for v in base dyn; do
  t0=$SECONDS
  timeout 120 ncu --kernel-name regex:fwd_kernel --launch-skip 1 --launch-count 1 --section SourceCounters --section WarpStateStats \
    --page source --print-source sass --csv $B/$v/flashcute bench --dtype bf16 --d 128 --seqlen 8192 --causal false --pass fwd \
    --backend sm90 $(cat $B/$v/args) --warmup 1 --iters 1 --no-flush > $O/r/ncu-src-$v-8192.csv 2> $O/r/ncu-src-$v.err
  echo "ncu-src $v rc=$? ($((SECONDS - t0)) s) $(wc -c < $O/r/ncu-src-$v-8192.csv) bytes"
  python3 bench/ncu_regions.py $O/r/ncu-src-$v-8192.csv --title "d 128 bf16 non-causal 8k, $v" > $O/r/ncu-src-$v-8192-regions.md 2>&1
  head -20 $O/r/ncu-src-$v-8192-regions.md
  gzip $O/r/ncu-src-$v-8192.csv
done
tar czf $O/r.tgz -C $O r && rm -rf $O/r
