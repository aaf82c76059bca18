#!/usr/bin/env bash
# Session 38, call 5 (H200): session 37's two Q buffers and first S outside the turns together
# (FLASHCUTE_SM90_FWD_Q_BUFS=2 FLASHCUTE_SM90_FWD_FREE_FIRST_S=1; each alone read 0.98-1.01). CLI
# build made on the CPU machine (bf16, d 64 and d 128, sm_90a) in build/ab38bin/qfs, against
# call 1's base (main's kernels).
O=${OUT:-gpu-out}; mkdir -p $O/r
B=build/ab38bin
V=qfs
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
for v in base $V; do echo "--fwd-workspace zeroed" > $B/$v/args; echo "$v $(sha1sum < $B/$v/flashcute | cut -c1-12)"; done | tee $O/r/bins.txt
san() {
  local tool=$1 d=$2; shift 2
  local t=$SECONDS
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 $B/$V/flashcute run --backend sm90 --dtype bf16 --d $d --iters 1 --check-heads 2 "$@" > san.txt 2>&1
  echo "rc=$? $((SECONDS - t))s $V $tool d$d $* :: $(grep -E 'SUMMARY|max\|out' san.txt | tr '\n' ' ' | cut -c1-200)"
}
{
  san synccheck 128 --batch 4 --heads 32 --seqlen 1000 --fwd-workspace yes
  san racecheck 128 --batch 4 --heads 32 --seqlen 900 --fwd-workspace yes
  san memcheck 128 --batch 2 --heads 8 --seqlen-q 1000 --seqlen-k 400 --causal --fwd-workspace yes
  san synccheck 64 --batch 4 --heads 32 --seqlen 1900 --fwd-workspace yes
} > $O/r/sanitizer.txt 2>&1
cut -c1-220 $O/r/sanitizer.txt
chk() {
  local d=$1; shift
  for args in "$@"; do
    out=$(timeout 60 $B/$V/flashcute run --backend sm90 --dtype bf16 --d $d --batch 2 --heads 16 --check-heads 4 --iters 2 $args 2>&1)
    echo "rc=$? d$d $args :: $(echo "$out" | grep -i -E 'max|err|check' | tr '\n' ' ' | cut -c1-200)"
  done
}
{
  chk 128 "--seqlen 512 --fwd-workspace yes" "--seqlen 700 --causal --fwd-workspace yes" "--seqlen 1000 --fwd-workspace no" \
          "--seqlen 130 --fwd-workspace yes" "--seqlen 3000 --causal --fwd-workspace yes" "--seqlen 4000 --fwd-workspace yes" \
          "--seqlen-q 1000 --seqlen-k 400 --causal --fwd-workspace yes" "--seqlen 1024 --heads-kv 4 --fwd-workspace yes" \
          "--seqlen 800 --window-left 100 --window-right 50 --fwd-workspace yes" "--seqlen 800 --softcap 30 --fwd-workspace yes"
  chk 64 "--seqlen 2000 --fwd-workspace yes" "--seqlen 1900 --fwd-workspace yes" "--seqlen 1000 --fwd-workspace no" \
         "--seqlen-q 2000 --seqlen-k 400 --fwd-workspace yes"
} > $O/r/checks-$V.txt 2>&1
echo "checks $V: $(grep -c '^rc=0' $O/r/checks-$V.txt) pass, $(grep -vc '^rc=0' $O/r/checks-$V.txt) not"
grep -v '^rc=0' $O/r/checks-$V.txt | head -3
t0=$SECONDS
timeout 250 python3 bench/ab_steady.py --bin-dir $B --variants base,$V \
  --case 128:no:512 --case 128:no:1024 --case 128:no:2048 --case 128:yes:512 --case 128:yes:1024 --case 64:no:2048 \
  --iters 600 --rounds 3 --out $O/r/ab.md > $O/r/ab.log 2>&1
echo "ab rc=$? ($((SECONDS - t0)) s)"; tail -8 $O/r/ab.md
cd $O && tar czf r.tgz r && rm -rf r
