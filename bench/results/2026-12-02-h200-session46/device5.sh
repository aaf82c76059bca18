#!/usr/bin/env bash
# Session 46, call 5 (H200): ncu's source page (per-instruction executed counts and stall samples) of
# main's d 64 short-tile kernel at causal 512 (bf16, call 3's `base` CLI build), read by region with
# bench/ncu_regions.py.
O=${OUT:-gpu-out}; mkdir -p $O/r
B=build/vbin
t0=$SECONDS
timeout 150 ncu --kernel-name regex:fwd_kernel --launch-skip 1 --launch-count 1 --section SourceCounters --section WarpStateStats \
  --page source --print-source sass --csv $B/base/flashcute bench --dtype bf16 --d 64 --seqlen 512 --causal true --pass fwd \
  --backend sm90 --fwd-workspace zeroed --warmup 1 --iters 1 --no-flush > $O/r/ncu-src-d64-c512.csv 2> $O/r/ncu-src.err
echo "ncu-src rc=$? ($((SECONDS - t0)) s) $(wc -c < $O/r/ncu-src-d64-c512.csv) bytes"
python3 bench/ncu_regions.py $O/r/ncu-src-d64-c512.csv --title "d 64 bf16 causal 512, main's 256 x 64 tiles" --top 25 > $O/r/ncu-src-d64-c512-regions.md 2>&1
cat $O/r/ncu-src-d64-c512-regions.md | head -60
sed -i "s#$PWD#<repo>#g" $O/r/*.csv $O/r/*.err 2>/dev/null
gzip $O/r/ncu-src-d64-c512.csv
tar czf $O/r.tgz -C $O r && rm -rf $O/r
