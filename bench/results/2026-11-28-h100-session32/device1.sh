#!/usr/bin/env bash
# Session 32, call 1: d 256's masked short tiles with O staged in two column chunks through its own
# 32 KB buffer, so Q's space is freed after the tile's last P V (`var`: this tree,
# FLASHCUTE_SM90_FWD_SPLIT_O=1) against O staged in Q's space (`base`: f69b7cf's kernels, build s31r).
# `veq`: var with Q's space freed after the tile's last S = Q K^T (FLASHCUTE_SM90_FWD_EARLY_Q=1; d 64's
# kernels unchanged). CLI builds made on the CPU machine, bf16 d 64 + d 256. fp64 checks and
# compute-sanitizer on var, ab_steady (800 launches, 2 rounds, zeroed workspace), then veq's checks.
O=${OUT:-gpu-out}; mkdir -p $O/r
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
for v in base var veq; do echo "--fwd-workspace zeroed" > build/ab40/$v/args; done
run() { out=$(timeout 60 "$b" run --dtype bf16 --check-heads 3 --iters 3 "$@" 2>&1); rc=$?; echo "rc=$rc $* :: $(echo "$out" | grep -i -E 'max|err|check|TFLOP|support' | tr '\n' ' ' | cut -c1-300)"; [[ $rc == 0 ]] || fail=1; }
checks() {
  for ws in yes no zeroed; do
    run --backend sm90 --d 256 --batch 4 --heads 8 --seqlen 512 --causal --fwd-workspace $ws
    run --backend sm90 --d 256 --batch 2 --heads 8 --seqlen 1000 --causal --fwd-workspace $ws
    run --backend sm90 --d 256 --batch 4 --heads 8 --seqlen 512 --fwd-workspace $ws
  done
  run --backend sm90 --d 256 --batch 2 --heads 8 --seqlen 2000 --fwd-workspace yes
  run --backend sm90 --d 256 --batch 2 --heads 8 --seqlen 1000 --softcap 30 --fwd-workspace yes
  run --backend sm90 --d 256 --batch 2 --heads 8 --seqlen 4096 --causal --fwd-workspace yes
  run --backend sm90 --d 256 --batch 2 --heads 8 --seqlen 3000 --causal --fwd-workspace no
  run --backend sm90 --d 256 --batch 3 --heads 8 --heads-kv 2 --seqlen-q 300 --seqlen-k 900 --causal
  run --backend sm90 --d 256 --batch 3 --heads 8 --heads-kv 4 --seqlen-q 700 --seqlen-k 200 --causal --fwd-workspace yes
  run --backend sm90 --d 256 --batch 2 --heads 8 --seqlen 1000 --window-left 100 --window-right 50 --fwd-workspace yes
  run --backend sm90 --d 256 --batch 2 --heads 8 --seqlen 777 --window-left 300 --window-right 0 --fwd-workspace no
  run --backend sm90 --d 256 --batch 2 --heads 8 --seqlen-q 1 --seqlen-k 700 --causal --fwd-workspace yes
  run --backend sm90 --d 256 --batch 2 --heads 8 --seqlen-q 77 --seqlen-k 3000 --causal --fwd-workspace yes
  run --backend sm90 --d 256 --dv 136 --batch 2 --heads 8 --seqlen 900 --causal --fwd-workspace yes
  run --backend sm90 --d 256 --dv 136 --batch 2 --heads 8 --seqlen 500 --fwd-workspace no
  run --backend sm90 --d 200 --batch 2 --heads 8 --seqlen 600 --causal --fwd-workspace yes
}
t0=$SECONDS; b=build/ab40/var/flashcute; fail=0; checks > $O/r/checks-var.log 2>&1
echo "checks var fail=$fail: $(grep -c '^rc=0' $O/r/checks-var.log) pass ($((SECONDS - t0)) s)"; grep -v "^rc=0" $O/r/checks-var.log | head -5
t0=$SECONDS; DIMS="64 256" timeout 150 bash bench/results/2026-11-27-h100-session23/checks.sh $b > $O/r/checks23-var.log 2>&1; echo "checks23 var rc=$? ($((SECONDS - t0)) s)"
t0=$SECONDS
for tool in racecheck synccheck memcheck initcheck; do for ws in no yes; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 $b run --backend sm90 --dtype bf16 --d 256 --batch 1 --heads 2 --seqlen 700 --causal --iters 1 --check-heads 1 --fwd-workspace $ws > san.txt 2>&1
  echo "rc=$? var $tool causal 700 workspace=$ws :: $(grep -E 'SUMMARY|max\|out' san.txt | tr '\n' ' ' | cut -c1-200)"
done; done > $O/r/sanitizer-splito.txt 2>&1
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 1 $b run --backend sm90 --dtype bf16 --d 256 --dv 136 --batch 1 --heads 2 --seqlen 500 --iters 1 --check-heads 1 --fwd-workspace yes > san.txt 2>&1
echo "rc=$? var racecheck non-causal 500 dv 136 :: $(grep -E 'SUMMARY|max\|out' san.txt | tr '\n' ' ' | cut -c1-200)" >> $O/r/sanitizer-splito.txt
echo "sanitizer ($((SECONDS - t0)) s)"; cat $O/r/sanitizer-splito.txt
t0=$SECONDS
timeout 300 python3 bench/ab_steady.py --bin-dir build/ab40 --variants base,var,veq \
  --case 256:yes:512 --case 256:yes:1024 --case 256:yes:2048 --case 256:yes:4096 --case 256:no:512 \
  --iters 800 --rounds 2 --out $O/r/ab-splito.md > $O/r/ab-splito.log 2>&1
echo "ab rc=$? ($((SECONDS - t0)) s)"; tail -8 $O/r/ab-splito.md
t0=$SECONDS; b=build/ab40/veq/flashcute; fail=0; timeout 100 bash -c "$(declare -f run checks); b=$b; checks" > $O/r/checks-veq.log 2>&1
echo "checks veq: $(grep -c '^rc=0' $O/r/checks-veq.log) pass, $(grep -c '^rc=[1-9]' $O/r/checks-veq.log) fail ($((SECONDS - t0)) s)"; grep -v "^rc=0" $O/r/checks-veq.log | head -5
for tool in racecheck synccheck; do
  timeout 40 compute-sanitizer --tool $tool --error-exitcode 1 $b run --backend sm90 --dtype bf16 --d 256 --batch 1 --heads 2 --seqlen 700 --causal --iters 1 --check-heads 1 --fwd-workspace yes > san.txt 2>&1
  echo "rc=$? veq $tool causal 700 workspace=yes :: $(grep -E 'SUMMARY|max\|out' san.txt | tr '\n' ' ' | cut -c1-200)"
done >> $O/r/sanitizer-splito.txt 2>&1; tail -2 $O/r/sanitizer-splito.txt
cd $O && tar czf r.tgz r && rm -rf r
