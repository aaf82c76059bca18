#!/usr/bin/env bash
# Session 23, call 1: where a consumer warp's overlapped step spends its cycles (clock() probe build,
# d 128, bf16) and ncu's per-instruction stall samples of the unprobed d 128 kernel at 8k keys.
O=${OUT:-gpu-out}; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,power.limit --format=csv > $O/gpu.txt
for s in 8192 2048 512; do
  for c in false true; do
    echo "== d128 seqlen $s causal $c"
    timeout 60 ab-bin/probe/flashcute bench --dtype bf16 --d 128 --seqlen $s --causal $c --pass fwd --backend sm90 --warmup 2 --iters 3 --no-flush 2>&1 | tail -4
    timeout 60 ab-bin/base/flashcute bench --dtype bf16 --d 128 --seqlen $s --causal $c --pass fwd --backend sm90 --warmup 2 --iters 5 --no-flush 2>&1 | tail -1
  done
done > $O/probe.txt 2>&1
cat $O/probe.txt
timeout 240 ncu --kernel-name regex:fwd_kernel --launch-skip 1 --launch-count 1 --section SourceCounters --section WarpStateStats --section SpeedOfLight \
  --page source --print-source sass --csv ab-bin/base/flashcute bench --dtype bf16 --d 128 --seqlen 8192 --causal false --pass fwd --backend sm90 --warmup 1 --iters 1 --no-flush > $O/ncu-src-d128-8k.csv 2> $O/ncu-src.err
echo "ncu rc=$? $(wc -c < $O/ncu-src-d128-8k.csv) bytes"; tail -3 $O/ncu-src.err
timeout 120 ncu --kernel-name regex:fwd_kernel --launch-skip 1 --launch-count 1 --section WarpStateStats --section SpeedOfLight --section ComputeWorkloadAnalysis \
  ab-bin/base/flashcute bench --dtype bf16 --d 128 --seqlen 8192 --causal false --pass fwd --backend sm90 --warmup 1 --iters 1 --no-flush > $O/ncu-d128-8k.txt 2>&1
echo "ncu2 rc=$?"
