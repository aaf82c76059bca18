#!/usr/bin/env bash
# flashcute run checks of one binary (rc 3 = check failed)
b=$1; fail=0
run() { out=$(timeout 60 "$b" run --backend sm90 --dtype bf16 --d 64 --check-heads 3 --iters 3 "$@" 2>&1); rc=$?; echo "rc=$rc $* :: $(echo "$out" | grep -i -E 'max|err|check|TFLOP' | tr '\n' ' ' | cut -c1-300)"; [[ $rc == 0 ]] || fail=1; }
run --batch 4 --heads 8 --seqlen 512 --fwd-workspace yes
run --batch 4 --heads 8 --seqlen 512 --fwd-workspace no
run --batch 2 --heads 8 --seqlen 1000 --fwd-workspace yes
run --batch 2 --heads 8 --seqlen 2048 --fwd-workspace yes
run --batch 1 --heads 4 --seqlen 4500 --fwd-workspace yes
run --batch 1 --heads 4 --seqlen 4500 --fwd-workspace no
run --batch 4 --heads 8 --seqlen 512 --causal --fwd-workspace yes
run --batch 2 --heads 8 --seqlen 777 --causal --fwd-workspace no
run --batch 1 --heads 4 --seqlen 3000 --causal --fwd-workspace yes
run --batch 2 --heads 8 --heads-kv 2 --seqlen-q 300 --seqlen-k 1100 --fwd-workspace yes
run --batch 2 --heads 8 --seqlen 1000 --window-left 100 --window-right 50 --fwd-workspace yes
run --batch 2 --heads 8 --seqlen 1000 --softcap 30 --fwd-workspace yes
run --batch 2 --heads 8 --seqlen-q 1 --seqlen-k 700 --fwd-workspace yes
run --batch 3 --heads 8 --seqlen 255 --fwd-workspace yes
run --batch 3 --heads 8 --heads-kv 1 --seqlen 1000 --fwd-workspace no
run --batch 3 --heads 8 --seqlen-q 250 --seqlen-k 130 --fwd-workspace yes
run --batch 2 --heads 8 --seqlen 511 --fwd-workspace yes
run --batch 2 --heads 8 --seqlen-q 300 --seqlen-k 1000 --causal --fwd-workspace yes
run --batch 2 --heads 8 --seqlen-q 1000 --seqlen-k 300 --causal --fwd-workspace yes
run --batch 2 --heads 8 --seqlen-q 1000 --seqlen-k 300 --causal --fwd-workspace no
run --batch 2 --heads 8 --heads-kv 4 --seqlen 2048 --causal --fwd-workspace yes
run --batch 2 --heads 8 --seqlen 1500 --window-left 200 --window-right 0 --fwd-workspace yes
exit $fail
