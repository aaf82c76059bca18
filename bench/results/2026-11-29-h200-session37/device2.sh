#!/usr/bin/env bash
# Session 37, call 2: O stored after the next tile's first S (FLASHCUTE_SM90_FWD_DEFER_O=1) on a GPU.
# CLI builds made on the CPU machine (bf16, d 64 and d 128, sm_90a), one per variant in build/ab37bin:
#   base   call 1's base (Q_BUFS=1: main's kernels)
#   qb2    call 1's Q_BUFS=2
#   dO     DEFER_O=1 (Q_BUFS=1)
#   (dO's ptxas: 208 bytes spilled in d 128's persistent kernel, 112-144 in d 64's three persistent
#   overlapped kernels, 12 in d 128's softcap/ALiBi one: a look at the idea, not a landing candidate)
# compute-sanitizer first, then fp64 checks, then ab_steady beside cuDNN.
O=${OUT:-gpu-out}; mkdir -p $O/r
B=build/ab37bin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
for v in $(ls $B); do echo "--fwd-workspace zeroed" > $B/$v/args; sha1sum $B/$v/flashcute; done | tee $O/r/bins.txt
san() {
  local v=$1 tool=$2 lim=$3 d=$4; shift 4
  local t=$SECONDS
  timeout $lim compute-sanitizer --tool $tool --error-exitcode 1 $B/$v/flashcute run --backend sm90 --dtype bf16 --d $d --iters 1 --check-heads 2 "$@" > san.txt 2>&1
  echo "rc=$? $((SECONDS - t))s $v $tool d$d $* :: $(grep -E 'SUMMARY|max\|out' san.txt | tr '\n' ' ' | cut -c1-200)"
}
t0=$SECONDS
{
  san dO memcheck 45 64 --batch 2 --heads 40 --seqlen 512 --causal --fwd-workspace yes
  san dO memcheck 45 64 --batch 4 --heads 40 --seqlen 700 --causal --fwd-workspace no
  san dO synccheck 45 64 --batch 4 --heads 40 --seqlen 512 --causal --fwd-workspace yes
  san dO racecheck 90 64 --batch 4 --heads 40 --seqlen 512 --causal --fwd-workspace yes
  san dO racecheck 90 64 --batch 4 --heads 32 --seqlen 1000 --fwd-workspace yes
  san dO memcheck 45 128 --batch 4 --heads 32 --seqlen 1000 --fwd-workspace yes
  san dO synccheck 45 128 --batch 4 --heads 32 --seqlen 1000 --causal --fwd-workspace no
  san dO racecheck 90 128 --batch 4 --heads 32 --seqlen 900 --fwd-workspace yes
  san dO racecheck 90 128 --batch 2 --heads 16 --seqlen 3000 --causal --fwd-workspace yes
  san dO initcheck 45 128 --batch 4 --heads 32 --seqlen 700 --fwd-workspace no
} > $O/r/sanitizer.txt 2>&1
echo "sanitizer ($((SECONDS - t0)) s)"; cut -c1-220 $O/r/sanitizer.txt
chk() {  # fp64 checks (rc 3 = check failed) of binary $1 at head dim $2 on the persistent kernels' shapes
  local b=$1 d=$2; shift 2
  for ws in yes no; do
    for s in 256 500 700 1000 1500 4000; do
      for c in "--causal" ""; do
        local ch=8; [ $s -ge 2048 ] && ch=2
        out=$(timeout 60 $b run --backend sm90 --dtype bf16 --d $d --batch 4 --heads 32 --seqlen $s $c --check-heads $ch --iters 2 --fwd-workspace $ws 2>&1)
        echo "rc=$? s=$s $c ws=$ws :: $(echo "$out" | grep -i -E 'max|err|check' | tr '\n' ' ' | cut -c1-200)"
      done
    done
    for extra in "--seqlen-q 300 --seqlen-k 1000 --causal" "--seqlen-q 1000 --seqlen-k 400 --causal" "--seqlen 1000 --window-left 100 --window-right 50" \
                 "--seqlen 900 --window-left 300 --window-right 0" "--seqlen 1024 --heads-kv 4 --causal" "--seqlen-q 1 --seqlen-k 700 --causal" \
                 "--seqlen 1000 --causal --heads-kv 1" "--seqlen 800 --softcap 30" "--seqlen 600 --causal --softcap 20"; do
      out=$(timeout 60 $b run --backend sm90 --dtype bf16 --d $d --batch 6 --heads 32 --check-heads 6 --iters 2 --fwd-workspace $ws $extra 2>&1)
      echo "rc=$? $extra ws=$ws :: $(echo "$out" | grep -i -E 'max|err|check' | tr '\n' ' ' | cut -c1-200)"
    done
  done
}
for vd in dO:64 dO:128; do v=${vd%:*}; d=${vd#*:}

  t0=$SECONDS; chk $B/$v/flashcute $d > $O/r/checks-$v-d$d.txt 2>&1
  echo "checks $v d$d: $(grep -c '^rc=0' $O/r/checks-$v-d$d.txt) pass, $(grep -vc '^rc=0' $O/r/checks-$v-d$d.txt) not ($((SECONDS - t0)) s)"
  grep -v '^rc=0' $O/r/checks-$v-d$d.txt | head -3
done
t0=$SECONDS
timeout 280 python3 bench/ab_steady.py --bin-dir $B --variants base,dO --peer sdpa_cudnn \
  --case 64:yes:512 --case 64:yes:1024 --case 64:no:512 --case 64:no:1024 \
  --case 128:no:512 --case 128:no:1024 --case 128:no:2048 --case 128:yes:512 \
  --iters 600 --rounds 2 --out $O/r/ab.md > $O/r/ab.log 2>&1
echo "ab rc=$? ($((SECONDS - t0)) s)"; tail -14 $O/r/ab.md
cd $O && tar czf r.tgz r && rm -rf r
