#!/usr/bin/env bash
# flashcute run checks (fp64 reference, rc 3 = check failed) aimed at the speculative exps' three
# paths: hit (default scale), in-place correction (a later key block's max passes a row's reference
# by more than the lazy threshold: --scale 2), recompute from smem (by more than 126 log2 units:
# --scale 30), rows whose first keys come after a tile's first block (windows, causal).
b=$1; fail=0
run() { out=$(timeout 120 "$b" run --backend sm90 --dtype bf16 --check-heads 2 --iters 2 "$@" 2>&1); rc=$?; echo "rc=$rc $* :: $(echo "$out" | grep -i -E 'max|err|check|TFLOP' | tr '\n' ' ' | cut -c1-300)"; [[ $rc == 0 ]] || fail=1; }
for d in ${DIMS:-128}; do
  for sc in 0.05 2 30; do
    run --d $d --batch 1 --heads 4 --seqlen 2048 --scale $sc --fwd-workspace no
    run --d $d --batch 1 --heads 4 --seqlen 2048 --scale $sc --causal --fwd-workspace no
    run --d $d --batch 2 --heads 4 --seqlen 1000 --scale $sc --fwd-workspace yes
    run --d $d --batch 1 --heads 4 --seqlen 2048 --scale $sc --window-left 200 --window-right 0
    run --d $d --batch 1 --heads 4 --seqlen 1500 --scale $sc --window-left 50 --window-right 300
  done
  run --d $d --batch 1 --heads 4 --seqlen-q 700 --seqlen-k 3000 --scale 4
  run --d $d --batch 1 --heads 4 --heads-kv 1 --seqlen 4096 --scale 3
done
exit $fail
