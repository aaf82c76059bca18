#!/usr/bin/env bash
# Session 67, call 2: (a) d 128's plain rows at 2k-8k on the non-persistent kernel (nodyn128: bf16
# d 128, -DFLASHCUTE_SM90_FWD_DYNAMIC=0) against main's dynamic persistent kernel (grid66) and cuDNN,
# 3 rounds; (b) fp16 8k / 16k at the steady state (grid66 against cuDNN, 2 rounds, session 45's
# launches per phase); (c) scripts/gpu-grid at d 256 on call 1's Python module (carried as
# build/py.tar.xz).
source bench/device_lib.sh
call_setup
bins grid66 nodyn128 > $O/r/bins.txt
export STEADY_DEADLINE=400 STEADY_TIMEOUT=150
steady_part ab128-np-8k grid66,nodyn128 320 bf16 3 128:no:8192 128:yes:8192
STEADY_TIMEOUT=100 steady_part ab128-np-4k grid66,nodyn128 625 bf16 3 128:no:4096 128:no:2048
pack
STEADY_TIMEOUT=120 steady_part grid-fp16-8192 grid66 320 fp16 2 64:no:8192 64:yes:8192 128:no:8192 128:yes:8192 256:no:8192 256:yes:8192
pack
STEADY_TIMEOUT=110 steady_part grid-fp16-16384 grid66 160 fp16 2 64:no:16384 64:yes:16384 128:no:16384 128:yes:16384 256:no:16384 256:yes:16384
pack
echo "steady parts done at $SECONDS s"
