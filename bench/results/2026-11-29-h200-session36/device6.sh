#!/usr/bin/env bash
# Session 36, call 6 (H200): the Q prefetch (FLASHCUTE_SM90_FWD_Q_PREFETCH=1) on d 64's masked short
# tiles. CLI builds made on the CPU machine (bf16, d 64, sm_90a), in build/ab36pf: base (main's
# head, SASS-identical to call 1's mir) and pf (the same with the prefetch).
O=${OUT:-gpu-out}; mkdir -p $O/r
B=build/ab36pf
for v in base pf; do echo "$v $(md5sum < $B/$v/flashcute | cut -c1-12)"; done | tee $O/r/binaries.txt
san() {
  local tool=$1; shift
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 $B/pf/flashcute run --backend sm90 --dtype bf16 --d 64 --iters 1 --check-heads 2 "$@" > san.txt 2>&1
  echo "rc=$? pf $tool $* :: $(grep -E 'SUMMARY|max\|out' san.txt | tr '\n' ' ' | cut -c1-200)"
}
{
  san memcheck --batch 2 --heads 40 --seqlen 512 --causal --fwd-workspace yes
  san racecheck --batch 4 --heads 40 --seqlen 512 --causal --fwd-workspace yes
  san synccheck --batch 4 --heads 40 --seqlen 700 --causal --fwd-workspace no
} > $O/r/sanitizer.txt 2>&1
cut -c1-160 $O/r/sanitizer.txt
for ws in yes no; do
  for s in 300 512 1000 1024; do
    out=$(timeout 60 $B/pf/flashcute run --backend sm90 --dtype bf16 --d 64 --batch 8 --heads 32 --seqlen $s --causal --check-heads 40 --iters 2 --fwd-workspace $ws 2>&1)
    echo "rc=$? causal s=$s ws=$ws :: $(echo "$out" | grep -i -E 'max|err|check' | tr '\n' ' ' | cut -c1-200)"
  done
  for extra in "--seqlen-q 300 --seqlen-k 1000 --causal" "--seqlen 1000 --window-left 100 --window-right 50" "--seqlen 1024 --heads-kv 4 --causal" "--seqlen-q 1 --seqlen-k 700 --causal"; do
    out=$(timeout 60 $B/pf/flashcute run --backend sm90 --dtype bf16 --d 64 --batch 6 --heads 32 --check-heads 24 --iters 2 --fwd-workspace $ws $extra 2>&1)
    echo "rc=$? $extra ws=$ws :: $(echo "$out" | grep -i -E 'max|err|check' | tr '\n' ' ' | cut -c1-200)"
  done
done > $O/r/checks-pf.txt 2>&1
echo "checks pf: $(grep -c '^rc=0' $O/r/checks-pf.txt) pass, $(grep -vc '^rc=0' $O/r/checks-pf.txt) not"
timeout 150 python3 bench/ab_steady.py --bin-dir $B --variants base,pf --peer sdpa_cudnn \
  --case 64:yes:512 --case 64:yes:1024 --iters 600 --rounds 2 --out $O/r/ab.md > $O/r/ab.log 2>&1
echo "ab rc=$?"; tail -3 $O/r/ab.md
cd $O && tar czf r.tgz r && rm -rf r
