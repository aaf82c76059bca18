#!/usr/bin/env bash
# Session 75's call 1 (NOT RUN: no machine was lent in session 75; session 74's next-d64-turns.sh, moved here and extended).
# d 64's masked kernel at a 128-key step, with and without session 72's plain-loop turns. At 192 keys the
# turns spilled 232-276 bytes (session 72); at 128 keys (S 64 registers instead of 96, perf-notes
# "Session 74") every turns build has 0 spills, no C751x. Variants (bf16 d 64 CLIs, sm_90a, in
# build/vbin.tar.xz; the results README has the build recipe):
#   main:   main's tree (the 192-key masked step);
#   m128:   -DFLASHCUTE_SM90_FWD_BLOCK_N_MASKED=128 (the masked step alone);
#   m128t:  session 72's plain-turns.patch applied, FLASHCUTE_SM90_FWD_PLAIN_TURNS=1 (S and P V on turns) and
#           the 128-key step; m128t2: =2 (S on turns only); m128t3: =3 (P V only);
#   m128tf: m128t's tree as fp16 + bf16 (the CLI of the d 64 test build device2.sh carries);
#   d128:   session 74's eqs CLI (fp16 + bf16, d 128: main's d 128 kernels; none has changed since).
# The turns are named barriers among the three consumer warpgroups: a miscounted arrive hangs, so
# synccheck / racecheck and the masked fp64 list come before any timing.
source bench/device_lib.sh
call_setup
bins main m128 m128t m128t2 m128t3 m128tf d128 > $O/r/bins.txt
export DEADLINE=${CALL_DEADLINE:-560} CHK_TIMEOUT=60
for V in m128 m128t m128t2 m128t3; do
  {
    san synccheck 64 --batch 2 --heads 8 --seqlen 3000 --causal --fwd-workspace yes
    SAN_TIMEOUT=90 san racecheck 64 --batch 1 --heads 8 --seqlen 2048 --causal --fwd-workspace yes
    san memcheck 64 --batch 2 --heads 8 --seqlen 4100 --fwd-workspace yes
  } > $O/r/sanitizer-$V.txt 2>&1
  { chk_masked64; chk_full64; } > $O/r/checks-$V.txt
done
for f in $O/r/sanitizer-*.txt $O/r/checks-*.txt; do tally $f; done | tee $O/r/tally.txt
pack
timeout $(left 200) python3 bench/ab_locked.py --deadline $(( $(left 200) - 10 )) --bin-dir $B --variants main,m128,m128t,m128t2,m128t3 \
  --case 64:yes:2048 --case 64:yes:4096 --case 64:yes:16384 --case 64:no:8192 --rounds 2 \
  --json $O/r/locked.json > $O/r/locked.md 2> $O/r/locked.log
echo "locked rc=$? at $SECONDS s"; cat $O/r/locked.md
pack
export STEADY_DEADLINE=$(( DEADLINE - 60 )) STEADY_TIMEOUT=80
steady_part steady-2k main,m128,m128t 1250 bf16 2 64:yes:2048
steady_part steady-4k main,m128,m128t 625 bf16 2 64:yes:4096 64:no:4096
pack
# While time is left: device3.sh's first part (d 128 non-causal 2k, three more rounds beside cuDNN).
steady_part steady-d128-2k-bf16 d128 1250 bf16 3 128:no:2048
pack && rm -rf $O/r
echo "all done at $SECONDS s"
