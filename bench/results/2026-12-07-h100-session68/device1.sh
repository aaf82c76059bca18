#!/usr/bin/env bash
# Session 68, call 1 (session 67's device4.sh, rebuilt binaries): d 128's plain rows at 8k on the
# non-persistent kernel (nodyn128: bf16 d 128, -DFLASHCUTE_SM90_FWD_DYNAMIC=0) against main's dynamic
# persistent kernel (main68: bf16 d 64 + 128 CLI build of main, the same kernels as session 66's
# grid66) and cuDNN, 3 rounds; then d 64 causal and non-causal 8k against cuDNN with NVML's instant
# power reading (GpuSampler, session 67), to see whether ours sits at the power cap there; then
# nodyn128's standard fp64 checks at d 128.
source bench/device_lib.sh
call_setup
bins main68 nodyn128 > $O/r/bins.txt
export STEADY_DEADLINE=200 STEADY_TIMEOUT=150
steady_part ab128-np-8k main68,nodyn128 320 bf16 3 128:no:8192 128:yes:8192
pack
STEADY_TIMEOUT=80 steady_part pw64 main68 320 bf16 1 64:yes:8192 64:no:8192
pack
# nodyn128's d 128 kernels against the fp64 reference (the standard list), in case its dispatch lands
V=nodyn128; [ $SECONDS -lt 330 ] && chk_std 128 > $O/r/checks-nodyn128.txt && tally $O/r/checks-nodyn128.txt
pack
echo "all done at $SECONDS s"
