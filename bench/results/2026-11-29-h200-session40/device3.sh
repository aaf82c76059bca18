#!/usr/bin/env bash
# Session 40, call 3 (H200): is d 128's persistent kernel slower per tile than its one-CTA-per-tile
# kernel on long rows? CLI builds (bf16, sm_90a) in build/ab40bin, made on the CPU machine:
#   base: main's kernels (session 39's ws2 binary), args "--fwd-workspace zeroed": the dynamic
#         persistent kernel up to 4k keys, one CTA per tile beyond
#   nows: the same binary with "--fwd-workspace no": one CTA per tile from 2k keys
#   dyn:  main's tree with FLASHCUTE_SM90_FWD_DYNAMIC=1: the dynamic persistent kernel at every length
O=${OUT:-gpu-out}; mkdir -p $O/r
source bench/device_lib.sh
B=build/ab40bin
bins base dyn > $O/r/bins.txt; echo "--fwd-workspace no" > $B/nows/args; echo "nows $(sha1sum < $B/nows/flashcute | cut -c1-12) (args: no workspace)" >> $O/r/bins.txt
cat $O/r/bins.txt
V=dyn
{ san racecheck 128 --batch 2 --heads 16 --seqlen 6000 --fwd-workspace yes
  san synccheck 128 --batch 2 --heads 16 --seqlen 5000 --fwd-workspace yes; } > $O/r/sanitizer.txt 2>&1
cut -c1-200 $O/r/sanitizer.txt
chk 128 "--seqlen 8192 --fwd-workspace yes" "--seqlen 5000 --fwd-workspace yes" "--seqlen 6000 --causal --fwd-workspace yes" > $O/r/checks-dyn.txt 2>&1
tally $O/r/checks-dyn.txt
t0=$SECONDS
timeout 260 python3 bench/ab_steady.py --bin-dir $B --variants base,nows,dyn --case 128:no:2048 --case 128:no:4096 \
  --case 128:no:8192 --case 128:no:16384 --iters 600 --rounds 3 --out $O/r/ab.md > $O/r/ab.log 2>&1
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat $O/r/ab.md
# ncu at non-causal 8k (base: one CTA per tile; dyn: persistent) and 4k (base: persistent; nows: one CTA per tile)
for spec in base:8192 dyn:8192 base:4096 nows:4096; do
  v=${spec%%:*}; s=${spec##*:}; t0=$SECONDS
  timeout 100 ncu --kernel-name regex:fwd_kernel --launch-skip 1 --launch-count 1 --section SpeedOfLight --section WarpStateStats \
    --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section SchedulerStats --section LaunchStats --section Occupancy \
    $B/$v/flashcute bench --dtype bf16 --d 128 --seqlen $s --causal false --pass fwd --backend sm90 $(cat $B/$v/args) --warmup 1 --iters 1 --no-flush \
    > $O/r/ncu-$v-$s.txt 2>&1
  echo "ncu $v $s rc=$? ($((SECONDS - t0)) s)"
done
tar czf $O/r.tgz -C $O r && rm -rf $O/r
