#!/usr/bin/env bash
# Session 67's last attempt (eleven starts had failed since 23:05 UTC and one H200 was taken back
# mid-call; 404 s of device time left): d 128's plain rows at 8k on the non-persistent kernel
# (nodyn128: bf16 d 128, -DFLASHCUTE_SM90_FWD_DYNAMIC=0) against main's dynamic persistent kernel
# (grid66) and cuDNN, 3 rounds; then, with NVML's instant power (GpuSampler, this session), d 64
# causal and non-causal 8k against cuDNN, 1 round (sessions 45-66 read ours at 269-414 W there with
# NVML's 1 s average).
source bench/device_lib.sh
call_setup
bins grid66 nodyn128 > $O/r/bins.txt
export STEADY_DEADLINE=200 STEADY_TIMEOUT=150
steady_part ab128-np-8k grid66,nodyn128 320 bf16 3 128:no:8192 128:yes:8192
pack
STEADY_TIMEOUT=80 steady_part pw64 grid66 320 bf16 1 64:yes:8192 64:no:8192
pack
echo "all done at $SECONDS s"
