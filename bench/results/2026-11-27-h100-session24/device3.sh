#!/usr/bin/env bash
# Session 24, call 3: ping-pong turns running on across a CTA's tiles (`cont`: epi2 + warpgroup 1's
# last hand-over of a tile opens warpgroup 0's first turn of the next; d 128 build): fp64 checks,
# compute-sanitizer synccheck on the persistent kernel, A/B against main (`base`) and epi2.
O=${OUT:-gpu-out}; mkdir -p $O
DIMS=128 timeout 100 bash bench/results/2026-11-27-h100-session23/checks-spec.sh ab-bin/cont/flashcute > $O/checks-spec-cont.txt 2>&1
echo "checks-spec cont rc=$? pass=$(grep -c '^rc=0' $O/checks-spec-cont.txt)"; grep -v "^rc=0" $O/checks-spec-cont.txt | cut -c1-200 | head -4
DIMS=128 timeout 60 bash bench/results/2026-11-27-h100-session23/checks.sh ab-bin/cont/flashcute > $O/checks-cont.txt 2>&1
echo "checks cont rc=$? pass=$(grep -c '^rc=0' $O/checks-cont.txt)"; grep -v "^rc=0" $O/checks-cont.txt | cut -c1-200 | head -4
for t in synccheck racecheck; do
  timeout 60 compute-sanitizer --tool $t ab-bin/cont/flashcute run --backend sm90 --dtype bf16 --d 128 --batch 2 --heads 40 --seqlen 600 --check-heads 1 --iters 1 > $O/san-$t-cont.txt 2>&1
  echo "$t rc=$? $(grep -E 'ERROR SUMMARY|hazard' $O/san-$t-cont.txt | head -2)"
done
python3 bench/ab_steady.py --bin-dir ab-bin --variants base,epi2,cont --case 128:no:512 --case 128:yes:512 --case 128:no:1024 --case 128:no:2048 \
  --case 128:no:8192 --case 128:yes:8192 --iters 1000 --rounds 2 --out $O/ab-cont.md > $O/ab-cont.log 2>&1
echo "ab rc=$?"; cat $O/ab-cont.md
