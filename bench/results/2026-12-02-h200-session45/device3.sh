#!/usr/bin/env bash
# Session 45, call 3: the d 64 and d 256 rows at >= 2k keys at the steady state with the landed kernels
# (this tree's default build; their SM90 kernels are SASS-identical to main's, sass-default-vs-main.md),
# ours against cuDNN, 2 rounds, bf16 and fp16, with call 2's launches per phase (1250 at 2k down to 160
# at 16k: about 0.5-0.7 s of GPU work; session 43's grid ran 500 everywhere).
O=${OUT:-gpu-out}; mkdir -p $O/r
source bench/device_lib.sh
B=build/ab45
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
bins cur64256 > $O/r/bins.txt
pack() { sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*.md $O/r/*.log 2>/dev/null; tar czf $O/r.tgz -C $O r; }
STEADY_DEADLINE=480 STEADY_TIMEOUT=110
for dt in bf16 fp16; do
  for sn in 2048:1250 4096:625 8192:320 16384:160; do
    s=${sn%:*}; n=${sn#*:}
    steady_part d64-256-$dt-$s cur64256 $n $dt 2 64:no:$s 64:yes:$s 256:no:$s 256:yes:$s
    pack
  done
done
pack && rm -rf $O/r
