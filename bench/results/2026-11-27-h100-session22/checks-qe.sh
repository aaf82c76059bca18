#!/usr/bin/env bash
# flashcute run checks (fp64 reference, rc 3 = check failed) of one binary on the persistent kernels whose
# Q space is freed after the last S = Q K^T (d 64 and d 128, overlapped loop, O in its own smem).
b=$1; fail=0
run() { out=$(timeout 60 "$b" run --backend sm90 --dtype bf16 --check-heads 3 --iters 3 "$@" 2>&1); rc=$?; echo "rc=$rc $* :: $(echo "$out" | grep -i -E 'max|err|check|TFLOP' | tr '\n' ' ' | cut -c1-300)"; [[ $rc == 0 ]] || fail=1; }
for d in 64 128; do
  run --d $d --batch 4 --heads 8 --seqlen 512 --fwd-workspace yes
  run --d $d --batch 4 --heads 8 --seqlen 512 --fwd-workspace no
  run --d $d --batch 2 --heads 8 --seqlen 1000 --fwd-workspace yes
  run --d $d --batch 2 --heads 8 --seqlen 2048 --fwd-workspace yes
  run --d $d --batch 4 --heads 8 --seqlen 512 --causal --fwd-workspace yes
  run --d $d --batch 2 --heads 8 --seqlen 3000 --causal --fwd-workspace yes
  run --d $d --batch 2 --heads 8 --heads-kv 2 --seqlen-q 300 --seqlen-k 1100 --fwd-workspace yes
  run --d $d --batch 2 --heads 8 --seqlen 1000 --window-left 100 --window-right 50 --fwd-workspace yes
  run --d $d --batch 2 --heads 8 --seqlen 1000 --softcap 30 --fwd-workspace yes
  run --d $d --batch 2 --heads 8 --seqlen-q 1 --seqlen-k 700 --fwd-workspace yes
  run --d $d --batch 3 --heads 8 --seqlen-q 250 --seqlen-k 130 --fwd-workspace yes
  run --d $d --batch 2 --heads 8 --seqlen-q 1000 --seqlen-k 64 --fwd-workspace no
  run --d $d --batch 2 --heads 8 --seqlen-q 1000 --seqlen-k 300 --causal --fwd-workspace no
done
exit $fail
