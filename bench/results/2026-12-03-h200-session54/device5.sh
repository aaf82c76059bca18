#!/usr/bin/env bash
# Session 54, call 5 (H200): causal 8k again with this session's final builds (session 53's 8k A/B ran
# builds made before that commit's last edit of fwd_kernel.cuh): ps64 / ps64h against base64 / base64h.
O=${OUT:-gpu-out}; mkdir -p $O/r
tar xJf build/vbin.tar.xz -C build
source bench/device_lib.sh
B=build/vbin
bins base64 ps64 base64h ps64h > $O/r/bins.txt
STEADY_TIMEOUT=60 steady_part ab64-bf16-c8k base64,ps64 300 bf16 3 64:yes:8192
pack
[ $SECONDS -lt 45 ] && STEADY_TIMEOUT=55 steady_part ab64-fp16-c8k base64h,ps64h 300 fp16 3 64:yes:8192
pack && rm -rf $O/r
