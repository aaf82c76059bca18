#!/usr/bin/env bash
# Session 66, call 1 (nvidia-h100-x1): every row of the grid (d 64 / 128 / 256, causal and not,
# 512-16k keys) at the steady state on an H100, the machine (sessions 42-54 ran the grid on
# H200s), bf16 then fp16, ours against cuDNN in the same rounds, 2 rounds, session 45's launches per
# phase (0.5-0.7 s of GPU work at every length). grid66: a CLI build of this tree made on the CPU
# machine (sm_90a, bf16 + fp16, d 64 / 128 / 256); its d 64 kernels SASS-identical to main's
# (bench/sass_diff.py against session 65's builds).
source bench/device_lib.sh
call_setup
bins grid66 > $O/r/bins.txt
export STEADY_DEADLINE=545 STEADY_TIMEOUT=100
for dt in bf16 fp16; do
  for sn in 512:5000 1024:2500 2048:1250 4096:625 8192:320 16384:160; do
    s=${sn%:*}; n=${sn#*:}
    steady_part grid-$dt-$s grid66 $n $dt 2 64:no:$s 64:yes:$s 128:no:$s 128:yes:$s 256:no:$s 256:yes:$s
    pack
  done
done
pack && rm -rf $O/r
echo "all done at $SECONDS s"
