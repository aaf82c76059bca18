#!/usr/bin/env bash
# Session 39, call 4 (H200): call 2's `ws2` against call 3's `main`, 5 rounds, on the rows where calls
# 1-3 disagreed (causal 512-2k, non-causal 1k) and non-causal 512 and 4k.
O=${OUT:-gpu-out}/r; mkdir -p $O
source bench/device_lib.sh
B=build/ab39bin
bins main ws2 | tee $O/bins.txt
t0=$SECONDS
timeout 400 python3 bench/ab_steady.py --bin-dir $B --variants main,ws2 \
  --case 128:yes:512 --case 128:yes:1024 --case 128:yes:2048 --case 128:no:512 --case 128:no:1024 --case 128:no:4096 \
  --iters 600 --rounds 5 --out $O/ab.md > $O/ab.log 2>&1
echo "ab rc=$? ($((SECONDS - t0)) s)"; tail -8 $O/ab.md
cd $O/.. && tar czf r.tgz r && rm -rf r
