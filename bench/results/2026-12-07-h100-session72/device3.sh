#!/usr/bin/env bash
# Session 72, call 2 (the warm machine after call 1, 78 s of device time left): eq / base at the locked
# clock on the rows call 1's deadline cut. Run as one command line; here as a script for the record.
source bench/device_lib.sh; call_setup; bins base eq > $O/r/bins.txt; DEADLINE=100
timeout 90 python3 bench/ab_locked.py --deadline 80 --bin-dir $B --variants base,eq --case 128:yes:512 --case 128:yes:1024 \
  --case 128:no:1024 --case 128:yes:2048 --rounds 2 --json $O/r/locked-eq2.json > $O/r/locked-eq2.md 2> $O/r/locked-eq2.log
echo rc=$?; cat $O/r/locked-eq2.md; tail -3 $O/r/locked-eq2.log; cat $O/r/gpu.txt; pack; rm -rf $O/r
