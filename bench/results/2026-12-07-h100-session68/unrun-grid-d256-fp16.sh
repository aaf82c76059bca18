#!/usr/bin/env bash
# Session 68, not run (needs the module of session 67's device1.sh; its fp16 parts ran in device2.sh): scripts/gpu-grid at d 64 and d 256 on call 2's Python module (carried as
# build/py.tar.xz), then fp16 8k / 16k at the steady state (fp16: a CLI build of this tree, fp16,
# d 64 / 128 / 256, made on the CPU machine) against cuDNN, 2 rounds, session 45's launches per phase.
source bench/device_lib.sh
call_setup
mkdir -p build/gpu && tar xJf build/py.tar.xz -C build/gpu && ls build/gpu/python | head -3
OUT=$O/r GRID_SPECS="${GRID3_SPECS:-64:h100 256:h100}" GRID_TIMEOUT=150 timeout 320 scripts/gpu-grid 2>&1 | tail -n 8
pack
bins fp16 > $O/r/bins.txt
export STEADY_DEADLINE=480
STEADY_TIMEOUT=100 steady_part grid-fp16-8192 fp16 320 fp16 2 64:no:8192 64:yes:8192 128:no:8192 128:yes:8192 256:no:8192 256:yes:8192
pack
STEADY_TIMEOUT=100 steady_part grid-fp16-16384 fp16 160 fp16 2 64:no:16384 64:yes:16384 128:no:16384 128:yes:16384 256:no:16384 256:yes:16384
pack
echo "all done at $SECONDS s"
