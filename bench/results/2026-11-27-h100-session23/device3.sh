#!/usr/bin/env bash
# Session 23, call 3: the speculative exps with one empty-barrier arrival per consumer warp (a warp that
# recomputes its scores reads K itself): fp64 checks of every path on spec and base, compute-sanitizer
# on the recompute path, then bench/ab_steady.py.
O=${OUT:-gpu-out}; mkdir -p $O
for v in spec base; do
  DIMS=128 bash bench/results/2026-11-27-h100-session23/checks-spec.sh ab-bin/$v/flashcute > $O/checks-spec-$v.txt 2>&1; echo "checks-spec $v rc=$? pass=$(grep -c '^rc=0' $O/checks-spec-$v.txt)"; grep -v "^rc=0" $O/checks-spec-$v.txt | cut -c1-200 | head -4
done
DIMS=128 bash bench/results/2026-11-27-h100-session23/checks.sh ab-bin/spec/flashcute > $O/checks-spec-default.txt 2>&1; echo "checks spec rc=$? pass=$(grep -c '^rc=0' $O/checks-spec-default.txt)"
for tool in racecheck synccheck memcheck; do
  for ws in no yes; do
    timeout 120 compute-sanitizer --tool $tool --print-limit 5 ab-bin/spec/flashcute run --backend sm90 --dtype bf16 --d 128 --batch 1 --heads 2 --seqlen 640 --scale 30 --fwd-workspace $ws --iters 1 --check-heads 1 > $O/san-$tool-$ws.txt 2>&1
    echo "$tool ws=$ws rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard' $O/san-$tool-$ws.txt | head -2 | tr '\n' ' ')"
  done
done
python3 bench/ab_steady.py --bin-dir ab-bin --variants base,spec $AB_CASES --iters ${AB_ITERS:-1000} --rounds 2 --out $O/ab-spec.md > $O/ab-spec.log 2>&1
echo "ab rc=$?"; cat $O/ab-spec.md
