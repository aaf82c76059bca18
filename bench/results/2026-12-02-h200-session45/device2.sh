#!/usr/bin/env bash
# Session 45, call 2: every d 128 row of the grid at the steady state with the landed kernels (half_first
# since session 44, which reaches the persistent plain kernel: causal up to 8k keys given a workspace),
# ours against cuDNN, 2 rounds, bf16 and fp16, with launches per phase for about 0.5-0.7 s of GPU work
# at every length (5000 at 512 down to 160 at 16k; session 43's grid ran 500 everywhere).
O=${OUT:-gpu-out}; mkdir -p $O/r
source bench/device_lib.sh
B=build/ab45
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
bins cur128 > $O/r/bins.txt
pack() { sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*.md $O/r/*.log 2>/dev/null; tar czf $O/r.tgz -C $O r; }
STEADY_DEADLINE=520 STEADY_TIMEOUT=90
for dt in bf16 fp16; do
  for sn in 512:5000 1024:2500 2048:1250 4096:625 8192:320 16384:160; do
    s=${sn%:*}; n=${sn#*:}
    steady_part d128-$dt-$s cur128 $n $dt 2 128:no:$s 128:yes:$s
    pack
  done
done
pack && rm -rf $O/r
