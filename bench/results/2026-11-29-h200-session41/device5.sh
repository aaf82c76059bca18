#!/usr/bin/env bash
# Session 41, call 5 (H200; call 3's and 4's machine, with call 3's binaries in build/abbin): ab_steady
# of `uq` against `ref` again, 2 rounds, in the 105 s of device time left, as run (one command line).
ls build/abbin/*/ >/dev/null 2>&1 || { echo nobin; exit 1; }; timeout 75 python3 bench/ab_steady.py --bin-dir build/abbin --variants ref,uq --case 128:no:2048 --case 64:no:2048 --case 128:yes:2048 --iters 600 --rounds 2 --out $OUT/ab.md > $OUT/ab.log 2>&1; echo rc=$?; cat $OUT/ab.md; tail -5 $OUT/ab.log
