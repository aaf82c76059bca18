#!/usr/bin/env bash
# flashcute run checks (fp64 reference, rc 3 = check failed) of one binary on the rows the d 128 / d 256
# cluster kernel takes (non-causal, not varlen, an even number of query blocks) and beside them.
b=$1; fail=0
run() { out=$(timeout 90 "$b" run --backend sm90 --dtype bf16 --check-heads 2 --iters 3 "$@" 2>&1); rc=$?; echo "rc=$rc $* :: $(echo "$out" | grep -i -E 'max|err|check|TFLOP' | tr '\n' ' ' | cut -c1-300)"; [[ $rc == 0 ]] || fail=1; }
for d in 128 256; do
  run --d $d --batch 2 --heads 4 --seqlen 2048 --fwd-workspace no
  run --d $d --batch 1 --heads 2 --seqlen-q 1024 --seqlen-k 8192 --fwd-workspace yes
  run --d $d --batch 2 --heads 4 --seqlen-q 384 --seqlen-k 2000 --fwd-workspace no
  run --d $d --batch 2 --heads 4 --seqlen-q 256 --seqlen-k 3001 --fwd-workspace no
  run --d $d --batch 3 --heads 4 --seqlen-q 200 --seqlen-k 1500 --fwd-workspace no
  run --d $d --batch 2 --heads 8 --heads-kv 2 --seqlen 2048 --fwd-workspace no
  run --d $d --batch 2 --heads 8 --heads-kv 1 --seqlen-q 512 --seqlen-k 5000 --fwd-workspace yes
  run --d $d --batch 2 --heads 4 --seqlen-q 1 --seqlen-k 3000 --fwd-workspace no
  run --d $d --batch 2 --heads 4 --seqlen-q 5000 --seqlen-k 100 --fwd-workspace yes
  run --d $d --batch 2 --heads 4 --seqlen 2048 --causal --fwd-workspace no
  run --d $d --batch 2 --heads 4 --seqlen 2048 --softcap 30 --fwd-workspace no
  run --d $d --batch 2 --heads 4 --seqlen 2048 --window-left 300 --window-right 100 --fwd-workspace no
done
exit $fail
