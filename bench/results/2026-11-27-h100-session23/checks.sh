#!/usr/bin/env bash
# flashcute run checks (fp64 reference, rc 3 = check failed) of one binary: the softmax's row max is
# shared by every forward kernel, so SM90 at d 64, 128 and 256 (persistent, overlapped, masked, plain
# softcap/ALiBi loops) and the SM80 forward.
b=$1; fail=0
run() { out=$(timeout 60 "$b" run --dtype bf16 --check-heads 3 --iters 3 "$@" 2>&1); rc=$?; echo "rc=$rc $* :: $(echo "$out" | grep -i -E 'max|err|check|TFLOP' | tr '\n' ' ' | cut -c1-300)"; [[ $rc == 0 ]] || fail=1; }
for d in ${DIMS:-64 128 256}; do
  run --backend sm90 --d $d --batch 4 --heads 8 --seqlen 512 --fwd-workspace yes
  run --backend sm90 --d $d --batch 2 --heads 8 --seqlen 2048 --fwd-workspace no
  run --backend sm90 --d $d --batch 2 --heads 8 --seqlen 3000 --causal --fwd-workspace yes
  run --backend sm90 --d $d --batch 2 --heads 8 --heads-kv 2 --seqlen-q 300 --seqlen-k 1100
  run --backend sm90 --d $d --batch 2 --heads 8 --seqlen 1000 --window-left 100 --window-right 50
  run --backend sm90 --d $d --batch 2 --heads 8 --seqlen 1000 --softcap 30
  run --backend sm90 --d $d --batch 2 --heads 8 --seqlen-q 1 --seqlen-k 700
  run --backend sm90 --d $d --batch 3 --heads 8 --seqlen-q 250 --seqlen-k 130 --causal
  run --backend sm80 --d $d --batch 2 --heads 8 --seqlen 1000 --causal
  run --backend sm80 --d $d --batch 2 --heads 8 --seqlen-q 300 --seqlen-k 1100
done
exit $fail
