#!/usr/bin/env bash
# Session 36, call 1: the skip loop's warpgroup barrier (FLASHCUTE_SM90_FWD_SKIP_SYNC) on a GPU.
# CLI builds made on the CPU machine (bf16, d 64, sm_90a), one per variant in build/ab36bin:
#   base   the landed default (WG_Q=0; SKIP_SYNC=-1, so no barrier in the one-Q kernel)
#   sync1  WG_Q=0, SKIP_SYNC=1 (the one-Q kernel with the barrier)
#   mir    WG_Q=2 (per-warpgroup Q, reversed rows on odd ring slots; the barrier comes with it)
#   mir6   mir with D64_SHORT_STAGES=6
#   mir8   mir with D64_SHORT_STAGES=8
# compute-sanitizer first (session 35's hanging case: memcheck, causal 512, 2 x 40, a workspace),
# then fp64 checks, then ab_steady beside cuDNN.
O=${OUT:-gpu-out}; mkdir -p $O/r
B=build/ab36bin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
for v in $(ls $B); do echo "--fwd-workspace zeroed" > $B/$v/args; done
san() {
  local v=$1 tool=$2 lim=$3; shift 3
  local t=$SECONDS
  timeout $lim compute-sanitizer --tool $tool --error-exitcode 1 $B/$v/flashcute run --backend sm90 --dtype bf16 --d 64 --iters 1 --check-heads 2 "$@" > san.txt 2>&1
  echo "rc=$? $((SECONDS - t))s $v $tool $* :: $(grep -E 'SUMMARY|max\|out' san.txt | tr '\n' ' ' | cut -c1-200)"
}
t0=$SECONDS
{
  for i in 1 2 3; do san mir memcheck 45 --batch 2 --heads 40 --seqlen 512 --causal --fwd-workspace yes --seed $i; done
  san mir memcheck 45 --batch 4 --heads 40 --seqlen 700 --causal --fwd-workspace yes
  san mir initcheck 45 --batch 4 --heads 40 --seqlen 500 --causal --fwd-workspace no
  san mir synccheck 45 --batch 4 --heads 40 --seqlen 512 --causal --fwd-workspace yes
  san mir racecheck 90 --batch 4 --heads 40 --seqlen 512 --causal --fwd-workspace yes
  san mir racecheck 90 --batch 4 --heads 16 --seqlen 700 --causal --fwd-workspace yes
  san sync1 memcheck 45 --batch 2 --heads 40 --seqlen 512 --causal --fwd-workspace yes
  san sync1 synccheck 45 --batch 4 --heads 40 --seqlen 512 --causal --fwd-workspace yes
  san sync1 racecheck 90 --batch 4 --heads 40 --seqlen 512 --causal --fwd-workspace yes
  san mir6 memcheck 45 --batch 2 --heads 40 --seqlen 512 --causal --fwd-workspace yes
  san mir8 memcheck 45 --batch 2 --heads 40 --seqlen 512 --causal --fwd-workspace yes
} > $O/r/sanitizer.txt 2>&1
echo "sanitizer ($((SECONDS - t0)) s)"; cut -c1-220 $O/r/sanitizer.txt
chk() {  # fp64 checks (rc 3 = check failed) of binary $1 on the masked short tiles' shapes
  local b=$1; shift
  for ws in yes no; do
    for s in 256 300 500 512 700 1000 1024 1500; do
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
for v in sync1 mir mir6 mir8; do
  t0=$SECONDS; chk $B/$v/flashcute > $O/r/checks-$v.txt 2>&1
  echo "checks $v: $(grep -c '^rc=0' $O/r/checks-$v.txt) pass, $(grep -vc '^rc=0' $O/r/checks-$v.txt) not ($((SECONDS - t0)) s)"
  grep -v '^rc=0' $O/r/checks-$v.txt | head -3
done
t0=$SECONDS
timeout 240 python3 bench/ab_steady.py --bin-dir $B --variants base,sync1,mir,mir6,mir8 --peer sdpa_cudnn \
  --case 64:yes:512 --case 64:yes:1024 \
  --iters 600 --rounds 2 --out $O/r/ab.md > $O/r/ab.log 2>&1
echo "ab rc=$? ($((SECONDS - t0)) s)"; tail -4 $O/r/ab.md
cd $O && tar czf r.tgz r && rm -rf r
