#!/usr/bin/env bash
# Session 71, call 1: Q in registers in d 128's overlapped kernels (FLASHCUTE_SM90_FWD_MAIN_Q_REGS),
# bf16 d 128 CLI builds made on the CPU machine:
#   base   main's kernels
#   qr2    -DFLASHCUTE_SM90_FWD_MAIN_Q_REGS=2 (the persistent and the non-persistent overlapped kernels)
#   base-fp16, qr2-fp16  the same two in fp16 builds
#   qr2fr  qr2 with -DFLASHCUTE_SM90_FWD_FORCE_RECOMPUTE=1 (every speculative step recomputes S from sQ:
#          the recompute's reads of Q's smem, which these kernels keep, checked on every step)
# 1. ab_locked (ncu's locked clock), the whole d 128 bf16 row set with a workspace; then 2k-8k without
#    one (the non-persistent kernel there too).
# 2. fp64 checks of qr2 and qr2fr: the standard d 128 list and the non-persistent kernel's shapes.
# 3. ab_steady at the power cap on the 8k / 16k rows, cuDNN in the same rounds.
source bench/device_lib.sh
call_setup
bins base qr2 qr2fr base-fp16 qr2-fp16 > $O/r/bins.txt
DEADLINE=560
C=(); for s in 512 1024 2048 4096 8192 16384; do C+=(--case 128:no:$s --case 128:yes:$s); done
timeout $(left 200) python3 bench/ab_locked.py --deadline 170 --bin-dir $B --variants base,qr2 "${C[@]}" \
  --rounds 2 --json $O/r/locked.json > $O/r/locked.md 2> $O/r/locked.log
echo "locked rc=$? at $SECONDS s"; cat $O/r/locked.md; tail -3 $O/r/locked.log
pack
NP=("--seqlen 2000 --fwd-workspace no" "--seqlen 3001 --causal --fwd-workspace no" "--seqlen 2048 --causal --fwd-workspace no"
  "--seqlen 9000 --batch 1 --heads 2 --check-heads 2" "--seqlen 9000 --causal --batch 1 --heads 2 --check-heads 2"
  "--seqlen-q 1500 --seqlen-k 2500 --causal --fwd-workspace no" "--seqlen-q 2500 --seqlen-k 1500 --causal --fwd-workspace no"
  "--seqlen-q 2100 --seqlen-k 1300 --fwd-workspace no" "--seqlen 2048 --heads-kv 2 --fwd-workspace no"
  "--seqlen 2048 --heads-kv 1 --causal --fwd-workspace no" "--seqlen 3000 --window-left 200 --window-right 100 --fwd-workspace no"
  "--seqlen 1100 --scale 30 --fwd-workspace no" "--seqlen 2500 --causal --scale 300 --fwd-workspace no"
  "--seqlen 700 --causal --scale 30 --fwd-workspace yes" "--seqlen 3000 --scale 300 --fwd-workspace yes"
  "--seqlen 1500 --batch 3 --heads 5 --fwd-workspace no" "--seqlen-q 1 --seqlen-k 3000 --fwd-workspace no")
export CHK_TIMEOUT=120
for V in qr2 qr2fr; do
  ( f=$O/r/checks-$V.txt; chk 128 "${NP[@]}" > $f; chk_std 128 >> $f ) &
done
wait
for V in qr2 qr2fr; do tally $O/r/checks-$V.txt; done | tee $O/r/checks-tally.txt
echo "checks done at $SECONDS s"
pack
export STEADY_DEADLINE=440 STEADY_TIMEOUT=$(left 110)
steady_part steady-long base,qr2 600 bf16 2 128:no:16384 128:yes:16384 128:no:8192 128:yes:8192
pack
timeout $(left 100) python3 bench/ab_locked.py --deadline $(( $(left 100) - 20 )) --bin-dir $B --variants base,qr2 --cli-args "--fwd-workspace no" \
  --case 128:no:2048 --case 128:no:4096 --case 128:yes:4096 --case 128:no:8192 \
  --rounds 2 --json $O/r/locked-nows.json > $O/r/locked-nows.md 2> $O/r/locked-nows.log
echo "locked-nows rc=$? at $SECONDS s"; cat $O/r/locked-nows.md
timeout $(left 100) python3 bench/ab_locked.py --deadline $(( $(left 100) - 20 )) --bin-dir $B --variants base-fp16,qr2-fp16 --dtype fp16 \
  --case 128:no:2048 --case 128:yes:2048 --case 128:no:8192 --case 128:yes:8192 --case 128:no:16384 --case 128:yes:16384 \
  --rounds 1 --json $O/r/locked-fp16.json > $O/r/locked-fp16.md 2> $O/r/locked-fp16.log
echo "locked-fp16 rc=$? at $SECONDS s"; cat $O/r/locked-fp16.md
pack && rm -rf $O/r
echo "all done at $SECONDS s"
