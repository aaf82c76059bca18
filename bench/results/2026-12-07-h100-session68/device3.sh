#!/usr/bin/env bash
# Session 68, call 3 (the same warm H100 as call 2; run as one command line, written out here): more
# bf16 rows for NVML's clock-event reasons (the cap column), 1 round each, main68 against cuDNN.
source bench/device_lib.sh; call_setup; bins main68 > $O/r/bins.txt
STEADY_DEADLINE=200 STEADY_TIMEOUT=120 steady_part cap-bf16-b main68 320 bf16 1 64:yes:16384 64:no:16384 128:no:16384 \
  128:yes:4096 64:no:4096 64:yes:2048 128:yes:2048 128:no:2048; pack
STEADY_DEADLINE=200 STEADY_TIMEOUT=60 steady_part cap-short main68 3000 bf16 1 64:yes:512 128:yes:512 128:no:512 64:yes:1024; pack
echo done $SECONDS
