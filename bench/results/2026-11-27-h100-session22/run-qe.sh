#!/usr/bin/env bash
# Early Q release: fp64 checks and racecheck on the variant, then the A/B against HEAD's kernels.
R=bench/results/2026-11-27-h100-session22
cd "$(dirname "$0")/../../.."
timeout 150 bash $R/checks-qe.sh ab-bin/qe/flashcute > $OUT/checks-qe.txt 2>&1; echo "checks rc=$?" | tee -a $OUT/checks-qe.txt
grep -c "^rc=0" $OUT/checks-qe.txt
timeout 60 compute-sanitizer --tool racecheck ab-bin/qe/flashcute run --backend sm90 --dtype bf16 --d 128 --batch 2 --heads 4 \
  --seqlen 700 --check-heads 1 --iters 1 > $OUT/san-racecheck-qe.txt 2>&1; echo "racecheck rc=$? $(tail -1 $OUT/san-racecheck-qe.txt)"
if grep -q "checks rc=0" $OUT/checks-qe.txt; then
  timeout 330 python3 bench/ab_steady.py --bin-dir ab-bin --variants base,qe --case 128:no:512 --case 128:no:1024 --case 128:no:2048 \
    --case 128:yes:512 --case 128:yes:2048 --case 64:no:512 --case 64:no:2048 --iters 1000 --rounds 2 --out $OUT/ab-qe.md > $OUT/ab-qe.log 2>&1
  tail -12 $OUT/ab-qe.md
fi
