#!/usr/bin/env bash
# Session 24, call 2, against main (`base`): O written to smem by stmatrix (`stsm`); stsm + the first
# block's skipped rescale + the MUFU reciprocal and log2 in finalize (`epi2`); epi2 + the consumers'
# tile index and Q's descriptors made warp-uniform by a shuffle (`uni`). d 64/128/256 bf16 builds:
# fp64 checks (on uni, which holds the other changes), the A/B on the short rows and one long row,
# ncu's source page at d 128 512.
O=${OUT:-gpu-out}; mkdir -p $O
timeout 170 bash bench/results/2026-11-27-h100-session23/checks.sh ab-bin/uni/flashcute > $O/checks-uni.txt 2>&1
echo "checks uni rc=$? pass=$(grep -c '^rc=0' $O/checks-uni.txt)"; grep -v "^rc=0" $O/checks-uni.txt | cut -c1-200 | head -4
DIMS=128 timeout 90 bash bench/results/2026-11-27-h100-session23/checks-spec.sh ab-bin/uni/flashcute > $O/checks-spec-uni.txt 2>&1
echo "checks-spec uni rc=$? pass=$(grep -c '^rc=0' $O/checks-spec-uni.txt)"; grep -v "^rc=0" $O/checks-spec-uni.txt | cut -c1-200 | head -4
timeout 100 ncu --kernel-name regex:fwd_kernel --launch-skip 1 --launch-count 1 --section SourceCounters --section WarpStateStats --section SpeedOfLight \
  --page source --print-source sass --csv ab-bin/uni/flashcute bench --dtype bf16 --d 128 --seqlen 512 --causal false --pass fwd --backend sm90 --warmup 1 --iters 1 --no-flush > $O/ncu-src-uni-d128-512.csv 2> $O/ncu-src-uni.err
echo "ncu rc=$?"
python3 bench/ab_steady.py --bin-dir ab-bin --variants base,stsm,epi2,uni --case 128:no:512 --case 128:yes:512 --case 128:no:1024 --case 64:no:512 \
  --case 256:no:512 --case 128:no:8192 --iters 1000 --rounds 2 --out $O/ab-epi.md > $O/ab-epi.log 2>&1
echo "ab rc=$?"; cat $O/ab-epi.md
