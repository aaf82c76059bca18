#!/usr/bin/env bash
# Session 74, call 2 (call 1's machine, warm; run as one command line, written out here): the fp16 rows
# that call 1's deadline skipped, eqs beside cuDNN at the steady state (d 128, 1k and 2k).
source bench/device_lib.sh; call_setup; bins eqs > $O/r/bins.txt; export STEADY_TIMEOUT=70
for sn in 1024:2500 2048:1250; do
  s=${sn%:*}; n=${sn#*:}
  steady_part steady-fp16-$s eqs $n fp16 2 128:no:$s 128:yes:$s
done
pack; echo done $SECONDS
