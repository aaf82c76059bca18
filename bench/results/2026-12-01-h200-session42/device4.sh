#!/usr/bin/env bash
# Session 42, call 4 (H200, call 3's machine and binaries), as run (one command line): ab_steady of
# dyn against base at the rows call 3 left out (16k, d 128 causal) and two rows dyn does not change.
O=$OUT; mkdir -p $O/r; source bench/device_lib.sh; B=build/abbin
for v in base dyn; do mkdir -p $B/$v && gunzip -c .abcarry/$v.gz > $B/$v/flashcute && chmod +x $B/$v/flashcute; done
bins base dyn > $O/r/bins.txt; cat $O/r/bins.txt
timeout 280 python3 bench/ab_steady.py --bin-dir $B --variants base,dyn --case 64:no:16384 --case 128:no:16384 \
  --case 128:yes:8192 --case 128:yes:16384 --case 128:no:4096 --case 64:yes:8192 --iters 700 --rounds 2 --out $O/r/ab.md > $O/r/ab.log 2>&1
echo "ab rc=$?"; cat $O/r/ab.md; sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*; tar czf $O/r.tgz -C $O r && rm -rf $O/r
