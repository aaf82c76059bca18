#!/usr/bin/env bash
# Session 68, call 2 (the short form, written after the module-building call (session 67's device1.sh) had failed to start
# four times):
# fp16 8k / 16k at the steady state (fp16: a CLI build of this tree, fp16, d 64 / 128 / 256, made on
# the CPU machine) against cuDNN, 2 rounds, session 45's launches per phase; then bf16 rows that fall
# short of their targets, 1 round, for NVML's clock-event reasons (the cap column).
source bench/device_lib.sh
call_setup
bins fp16 main68 > $O/r/bins.txt
export STEADY_DEADLINE=420
STEADY_TIMEOUT=140 steady_part grid-fp16-8192 fp16 320 fp16 2 64:no:8192 64:yes:8192 128:no:8192 128:yes:8192 256:no:8192 256:yes:8192
pack
STEADY_TIMEOUT=110 steady_part grid-fp16-16384 fp16 160 fp16 2 64:no:16384 64:yes:16384 128:no:16384 128:yes:16384 256:no:16384 256:yes:16384
pack
STEADY_TIMEOUT=80 steady_part cap-bf16 main68 320 bf16 1 64:no:8192 64:yes:4096 128:no:4096 128:no:8192 128:yes:8192
pack
echo "all done at $SECONDS s"
