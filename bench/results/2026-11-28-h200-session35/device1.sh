#!/usr/bin/env bash
# Session 35, call 1: Q in per-warpgroup slices on d 64's masked short tiles (FLASHCUTE_SM90_FWD_WG_Q).
# CLI builds made on the CPU machine (bf16, d 64, sm_90a), one per variant in build/ab35bin:
#   base   WG_Q=0 (one Q for the CTA, as before this session)
#   wgq    WG_Q=1 (per-warpgroup Q slices, rows in order)
#   mir    WG_Q=2 (per-warpgroup slices, odd ring slots' tiles with the rows' warpgroups reversed)
#   mir2k  WG_Q=2 and D64_SHORT_MASKED_MAX=2048 (the masked short tiles up to 2k keys)
# fp64 checks and compute-sanitizer on the new kernels, then ab_steady beside cuDNN.
O=${OUT:-gpu-out}; mkdir -p $O/r
B=build/ab35bin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
for v in $(ls $B); do echo "--fwd-workspace zeroed" > $B/$v/args; done
chk() {  # fp64 checks (rc 3 = check failed) of binary $1 on the masked short tiles' shapes
  local b=$1; shift
  for ws in yes no; do
    for s in 256 300 500 512 700 1000 1024 1500 2048; do
      out=$(timeout 60 $b run --backend sm90 --dtype bf16 --d 64 --batch 8 --heads 32 --seqlen $s --causal --check-heads 40 --iters 2 --fwd-workspace $ws 2>&1)
      echo "rc=$? causal s=$s ws=$ws :: $(echo "$out" | grep -i -E 'max|err|check' | tr '\n' ' ' | cut -c1-200)"
    done
    for extra in "--seqlen-q 300 --seqlen-k 1000 --causal" "--seqlen-q 1000 --seqlen-k 400 --causal" "--seqlen 1000 --window-left 100 --window-right 50" \
                 "--seqlen 900 --window-left 300 --window-right 0" "--seqlen 1024 --heads-kv 4 --causal" "--seqlen-q 1 --seqlen-k 700 --causal" \
                 "--seqlen 1000 --causal --heads-kv 1"; do
      out=$(timeout 60 $b run --backend sm90 --dtype bf16 --d 64 --batch 6 --heads 32 --check-heads 24 --iters 2 --fwd-workspace $ws $extra 2>&1)
      echo "rc=$? $extra ws=$ws :: $(echo "$out" | grep -i -E 'max|err|check' | tr '\n' ' ' | cut -c1-200)"
    done
  done
}
for v in wgq mir mir2k; do
  t0=$SECONDS; chk $B/$v/flashcute > $O/r/checks-$v.txt 2>&1
  DIMS=64 timeout 120 bash bench/results/2026-11-27-h100-session23/checks.sh $B/$v/flashcute >> $O/r/checks-$v.txt 2>&1
  echo "checks $v: $(grep -c '^rc=0' $O/r/checks-$v.txt) pass, $(grep -vc '^rc=0' $O/r/checks-$v.txt) not ($((SECONDS - t0)) s)"
  grep -v '^rc=0' $O/r/checks-$v.txt | head -3
done
t0=$SECONDS
timeout 240 python3 bench/ab_steady.py --bin-dir $B --variants base,wgq,mir,mir2k --peer sdpa_cudnn \
  --case 64:yes:512 --case 64:yes:1024 --case 64:yes:2048 \
  --iters 600 --rounds 2 --out $O/r/ab-wgq.md > $O/r/ab-wgq.log 2>&1
echo "ab rc=$? ($((SECONDS - t0)) s)"; tail -14 $O/r/ab-wgq.md
t0=$SECONDS
b=$B/mir/flashcute
san() {
  local tool=$1; shift
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 1 $b run --backend sm90 --dtype bf16 --d 64 --iters 1 --check-heads 1 "$@" > san.txt 2>&1
  echo "rc=$? $tool $* :: $(grep -E 'SUMMARY|max\|out' san.txt | tr '\n' ' ' | cut -c1-200)"
}
{
  for tool in racecheck synccheck; do
    san $tool --batch 4 --heads 16 --seqlen 700 --causal --fwd-workspace yes
    san $tool --batch 4 --heads 16 --seqlen 1000 --causal --fwd-workspace no
  done
  san racecheck --batch 4 --heads 16 --seqlen 900 --window-left 300 --window-right 0 --fwd-workspace no
  san memcheck --batch 4 --heads 16 --seqlen 700 --causal --fwd-workspace yes
  san initcheck --batch 4 --heads 32 --seqlen 500 --causal --fwd-workspace no
} > $O/r/sanitizer-mir.txt 2>&1
echo "sanitizer ($((SECONDS - t0)) s)"; cat $O/r/sanitizer-mir.txt
cd $O && tar czf r.tgz r && rm -rf r
