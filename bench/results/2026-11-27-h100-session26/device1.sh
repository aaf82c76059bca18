#!/usr/bin/env bash
# Session 26, call 1: `lmc` (softmax: the quad's max shuffles only where a thread's own maxima may
# move a reference) against main's kernels: fp64 checks (SM90 d 64/128/256 and SM80, the speculative
# paths at d 128), then an A/B at the steady state.
O=${OUT:-gpu-out}; mkdir -p $O
S=bench/results/2026-11-27-h100-session23
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,power.limit --format=csv > $O/gpu.txt
mkdir -p ab-bin/base ab-bin/lmc
cp build/cli/apps/flashcute ab-bin/base/; cp build/lmc/apps/flashcute ab-bin/lmc/
timeout 170 bash $S/checks.sh ab-bin/lmc/flashcute > $O/checks-lmc.txt 2>&1; echo "checks rc=$?" >> $O/checks-lmc.txt
DIMS=128 timeout 120 bash $S/checks-spec.sh ab-bin/lmc/flashcute > $O/checks-spec-lmc.txt 2>&1; echo "checks-spec rc=$?" >> $O/checks-spec-lmc.txt
tail -1 $O/checks-lmc.txt; tail -1 $O/checks-spec-lmc.txt; grep -c '^rc=0' $O/checks-lmc.txt $O/checks-spec-lmc.txt
grep -v '^rc=0' $O/checks-lmc.txt $O/checks-spec-lmc.txt | grep '^.*rc=' | cut -c1-220 | head -5
timeout 270 python3 bench/ab_steady.py --bin-dir ab-bin --variants base,lmc \
  --case 128:no:512 --case 128:yes:512 --case 128:no:2048 --case 128:no:8192 --case 128:yes:8192 \
  --case 64:no:8192 --case 256:no:8192 --case 64:yes:1024 \
  --iters 1000 --rounds 2 --out $O/ab-lmc.md > $O/ab-lmc.log 2>&1
echo "ab rc=$?"; tail -12 $O/ab-lmc.md; tail -3 $O/ab-lmc.log
