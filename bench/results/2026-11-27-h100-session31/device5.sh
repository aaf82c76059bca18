#!/usr/bin/env bash
# Session 31, call 6 (review): the dispatch's one schedule rule (schedule_up_to) on the GPU. A CLI
# build of the reviewed tree (bf16, d 64 + d 256: the rows with masked kernels; build/ab34/rev; its
# kernels SASS-identical to the tested ones) runs fp64 checks on every branch of that dispatch, with
# and without a workspace, then session 23's checks.
O=${OUT:-gpu-out}; mkdir -p $O/r
b=build/ab34/rev/flashcute; fail=0
run() { out=$(timeout 60 "$b" run --dtype bf16 --check-heads 3 --iters 3 "$@" 2>&1); rc=$?; echo "rc=$rc $* :: $(echo "$out" | grep -i -E 'max|err|check|TFLOP|support' | tr '\n' ' ' | cut -c1-300)"; [[ $rc == 0 ]] || fail=1; }
{
for ws in yes no zeroed; do
  for d in 64 256; do
    run --backend sm90 --d $d --batch 4 --heads 8 --seqlen 512 --causal --fwd-workspace $ws   # short masked
    run --backend sm90 --d $d --batch 4 --heads 8 --seqlen 512 --fwd-workspace $ws            # d 64 short, d 256 full
    run --backend sm90 --d $d --batch 2 --heads 8 --seqlen 2048 --causal --fwd-workspace $ws  # d 64 masked, d 256 short
    run --backend sm90 --d $d --batch 2 --heads 4 --seqlen 5000 --causal --fwd-workspace $ws  # d 64 masked, d 256 row
    run --backend sm90 --d $d --batch 2 --heads 8 --seqlen 1000 --fwd-workspace $ws           # unmasked rows
    run --backend sm90 --d $d --batch 2 --heads 8 --seqlen 1000 --window-left 100 --window-right 50 --fwd-workspace $ws
  done
done
run --backend sm90 --d 64 --batch 1 --heads 4 --seqlen 17000 --causal --fwd-workspace no   # past masked_max: non-persistent
run --backend sm90 --d 256 --batch 3 --heads 8 --heads-kv 2 --seqlen-q 300 --seqlen-k 900 --causal
} > $O/r/checks-rev.log 2>&1
echo "checks rev fail=$fail: $(grep -c '^rc=0' $O/r/checks-rev.log) pass of $(grep -c '^rc=' $O/r/checks-rev.log)"; grep -v "^rc=0" $O/r/checks-rev.log | head -5
DIMS="64 256" bash bench/results/2026-11-27-h100-session23/checks.sh $b > $O/r/checks23-rev.log 2>&1; echo "checks23 rc=$? $(grep -c '^rc=0' $O/r/checks23-rev.log) pass"
cd $O && tar czf r.tgz r && rm -rf r
