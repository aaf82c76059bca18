#!/usr/bin/env bash
# Session 40, call 4 (H200): L2 policies on the forward's TMA loads (FLASHCUTE_SM90_FWD_CACHE_HINTS).
# CLI builds (bf16, d 128, sm_90a) in build/ab40bin, made on the CPU machine:
#   base: main's kernels (call 3's base); hint: K/V EVICT_LAST + Q EVICT_FIRST (=2);
#   kvl: K/V EVICT_LAST only (=1); dyn: call 3's FLASHCUTE_SM90_FWD_DYNAMIC=1; dynhint: dyn + hints 2.
O=${OUT:-gpu-out}; mkdir -p $O/r
source bench/device_lib.sh
B=build/ab40bin
bins base hint kvl dyn dynhint > $O/r/bins.txt; cat $O/r/bins.txt
V=hint
{ san racecheck 128 --batch 2 --heads 16 --seqlen 2000 --fwd-workspace yes
  san synccheck 128 --batch 2 --heads 16 --seqlen 3000 --causal --fwd-workspace yes
  san memcheck 128 --batch 2 --heads 16 --seqlen 700 --causal --fwd-workspace no; } > $O/r/sanitizer.txt 2>&1
cut -c1-200 $O/r/sanitizer.txt
chk_std 128 > $O/r/checks-hint.txt 2>&1; tally $O/r/checks-hint.txt
V=dynhint; chk 128 "--seqlen 8192 --fwd-workspace yes" "--seqlen 5000 --causal --fwd-workspace yes" > $O/r/checks-dynhint.txt 2>&1; tally $O/r/checks-dynhint.txt
t0=$SECONDS
timeout 230 python3 bench/ab_steady.py --bin-dir $B --variants base,hint,kvl --case 128:no:1024 --case 128:no:2048 --case 128:no:4096 \
  --case 128:no:8192 --case 128:yes:2048 --case 128:yes:4096 --iters 600 --rounds 2 --out $O/r/ab.md > $O/r/ab.log 2>&1
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat $O/r/ab.md
t0=$SECONDS
timeout 90 python3 bench/ab_steady.py --bin-dir $B --variants base,dyn,dynhint --case 128:no:16384 --iters 600 --rounds 2 --out $O/r/ab-dyn.md > $O/r/ab-dyn.log 2>&1
echo "ab-dyn rc=$? ($((SECONDS - t0)) s)"; cat $O/r/ab-dyn.md
for spec in hint:4096 dynhint:16384 dyn:16384; do
  v=${spec%%:*}; s=${spec##*:}; t0=$SECONDS
  timeout 60 ncu --kernel-name regex:fwd_kernel --launch-skip 1 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --metrics dram__bytes_read.sum,smsp__inst_executed.sum \
    $B/$v/flashcute bench --dtype bf16 --d 128 --seqlen $s --causal false --pass fwd --backend sm90 $(cat $B/$v/args) --warmup 1 --iters 1 --no-flush \
    > $O/r/ncu-$v-$s.txt 2>&1
  echo "ncu $v $s rc=$? ($((SECONDS - t0)) s) $(grep -E 'L2 Hit Rate|dram__bytes_read|inst_executed.sum|Elapsed Cycles' $O/r/ncu-$v-$s.txt | sed 's/  */ /g' | tr '\n' ';')"
done
tar czf $O/r.tgz -C $O r && rm -rf $O/r
