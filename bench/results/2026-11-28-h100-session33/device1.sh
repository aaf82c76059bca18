#!/usr/bin/env bash
# Session 33, call 1: the overlapped loop's tail. `var` (this tree's defaults): each row's 1 / sum and
# LSE computed and stored while the tile's last P V runs (FLASHCUTE_SM90_FWD_EARLY_ROWS=1, not the
# four-warpgroup kernels), and with O in its own smem the epilogue's first WAR wait on it there too
# (FLASHCUTE_SM90_FWD_EARLY_WAR=1). `base`: the same tree with both 0 (the order before session 33).
# CLI builds made on the CPU machine, bf16 d 64 + 128 + 256. fp64 checks and compute-sanitizer on
# var, then ab_steady (600 launches, 2 rounds, zeroed workspace).
O=${OUT:-gpu-out}; mkdir -p $O/r
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
for v in base var; do echo "--fwd-workspace zeroed" > build/ab33/$v/args; done
b=build/ab33/var/flashcute
t0=$SECONDS; timeout 120 bash bench/results/2026-11-27-h100-session23/checks.sh $b > $O/r/checks23-var.log 2>&1
echo "checks23 var rc=$? $(grep -c '^rc=0' $O/r/checks23-var.log) pass ($((SECONDS - t0)) s)"; grep -v "^rc=0" $O/r/checks23-var.log | head -5
t0=$SECONDS
san() {
  local tool=$1; shift
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 $b run --backend sm90 --dtype bf16 --batch 1 --heads 2 --iters 1 --check-heads 1 "$@" > san.txt 2>&1
  echo "rc=$? $tool $* :: $(grep -E 'SUMMARY|max\|out' san.txt | tr '\n' ' ' | cut -c1-200)"
}
{
  for tool in racecheck synccheck; do
    san $tool --d 128 --seqlen 700 --fwd-workspace yes
    san $tool --d 64 --seqlen 700 --causal --fwd-workspace yes
    san $tool --d 256 --seqlen 700 --causal --fwd-workspace yes
  done
  san memcheck --d 128 --seqlen 700 --causal --fwd-workspace yes
  san initcheck --d 128 --seqlen 700 --fwd-workspace no
} > $O/r/sanitizer-var.txt 2>&1
echo "sanitizer ($((SECONDS - t0)) s)"; cat $O/r/sanitizer-var.txt
t0=$SECONDS
timeout 390 python3 bench/ab_steady.py --bin-dir build/ab33 --variants base,var \
  --case 128:no:512 --case 128:yes:512 --case 128:no:1024 --case 128:yes:1024 --case 128:no:8192 \
  --case 64:no:512 --case 64:yes:512 --case 64:no:2048 --case 256:yes:512 --case 256:no:1024 \
  --iters 600 --rounds 2 --out $O/r/ab-tail.md > $O/r/ab-tail.log 2>&1
echo "ab rc=$? ($((SECONDS - t0)) s)"; tail -12 $O/r/ab-tail.md
cd $O && tar czf r.tgz r && rm -rf r
