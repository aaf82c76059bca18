#!/usr/bin/env bash
# Session 29, call 9 (same machine and builds as call 8): base / fd / fdq at the steady state
# (ab_steady, 500 launches, 2 rounds, each with the zeroed workspace).
O=${OUT:-gpu-out}; mkdir -p $O/r
mkdir -p ab9/base ab9/fd ab9/fdq
for v in base fd fdq; do cp build/$v/apps/flashcute ab9/$v/; echo "--fwd-workspace zeroed" > ab9/$v/args; done
timeout 330 python3 bench/ab_steady.py --bin-dir ab9 --variants base,fd,fdq \
  --case 128:no:512 --case 128:yes:512 --case 128:no:1024 --case 128:yes:1024 --case 128:no:2048 --case 128:yes:2048 \
  --iters 500 --rounds 2 --out $O/r/ab-fd.md > $O/r/ab-fd.log 2>&1
echo "ab rc=$?"; tail -9 $O/r/ab-fd.md
tar czf $O/r.tgz -C $O r
