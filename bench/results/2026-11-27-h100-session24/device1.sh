#!/usr/bin/env bash
# Session 24, call 1: fp64 checks of the `dyn` build (every problem given a workspace on the dynamic
# persistent kernel), ncu source-page stall samples of main's d 128 kernel at 512 keys (the short
# rows' per-tile cost), and an A/B of dyn against main at d 128.
O=${OUT:-gpu-out}; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,power.limit --format=csv > $O/gpu.txt
DIMS=128 timeout 150 bash bench/results/2026-11-27-h100-session23/checks-spec.sh ab-bin/dyn/flashcute > $O/checks-dyn.txt 2>&1
echo "checks dyn rc=$? pass=$(grep -c '^rc=0' $O/checks-dyn.txt)"; grep -v "^rc=0" $O/checks-dyn.txt | cut -c1-200 | head -4
for s in 512 8192; do
timeout 150 ncu --kernel-name regex:fwd_kernel --launch-skip 1 --launch-count 1 --section SourceCounters --section WarpStateStats --section SpeedOfLight \
  --page source --print-source sass --csv ab-bin/base/flashcute bench --dtype bf16 --d 128 --seqlen $s --causal false --pass fwd --backend sm90 --warmup 1 --iters 1 --no-flush > $O/ncu-src-d128-$s.csv 2> $O/ncu-src-$s.err
echo "ncu $s rc=$? $(wc -c < $O/ncu-src-d128-$s.csv) bytes"; tail -2 $O/ncu-src-$s.err
done
python3 bench/ab_steady.py --bin-dir ab-bin --variants base,dyn --case 128:yes:8192 --case 128:yes:16384 --case 128:no:8192 --case 128:no:16384 --case 128:yes:4096 \
  --iters 1000 --rounds 2 --out $O/ab-dyn.md > $O/ab-dyn.log 2>&1
echo "ab rc=$?"; cat $O/ab-dyn.md
