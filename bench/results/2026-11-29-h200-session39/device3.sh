#!/usr/bin/env bash
# Session 39, call 3 (H200): calls 1-2's `base` against `main` (a CLI build of main's tree made after
# the experiments, bf16, d 64 and d 128: bench/sass_diff.py finds 3 of its 11 SM90 kernels compiled
# differently from base's), and call 2's `ws2` against both, 3 rounds.
O=${OUT:-gpu-out}/r; mkdir -p $O
source bench/device_lib.sh
B=build/ab39bin
bins main base ws2 | tee $O/bins.txt
t0=$SECONDS
timeout 330 python3 bench/ab_steady.py --bin-dir $B --variants main,base,ws2 \
  --case 128:no:1024 --case 128:no:2048 --case 128:no:4096 --case 128:yes:1024 --case 128:yes:2048 \
  --iters 600 --rounds 3 --out $O/ab-d128.md > $O/ab-d128.log 2>&1
echo "ab d128 rc=$? ($((SECONDS - t0)) s)"; tail -7 $O/ab-d128.md
t0=$SECONDS
timeout 120 python3 bench/ab_steady.py --bin-dir $B --variants main,base \
  --case 64:yes:512 --case 64:yes:1024 --iters 600 --rounds 3 --out $O/ab-d64.md > $O/ab-d64.log 2>&1
echo "ab d64 rc=$? ($((SECONDS - t0)) s)"; tail -4 $O/ab-d64.md
cd $O/.. && tar czf r.tgz r && rm -rf r
