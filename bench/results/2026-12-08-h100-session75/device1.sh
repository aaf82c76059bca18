#!/usr/bin/env bash
# Session 75 call 1 (prepared in session 74 as next-d64-turns.sh): d 64's masked kernel at a 128-key step, with and
# without session 72's plain-loop turns. At 192 keys the turns spilled 232-276 bytes (session 72); at
# 128 keys (S 64 registers instead of 96, perf-notes "Session 74") the kernel with them builds at
# 0 spills, no C751x (session 74's ptxas report). Variants (bf16, d 64, sm_90a CLIs):
#   main:  this tree;
#   m128:  -DFLASHCUTE_SM90_FWD_BLOCK_N_MASKED=128 (the masked step alone);
#   m128t: bench/results/2026-12-07-h100-session72/plain-turns.patch applied, and
#          "-DFLASHCUTE_SM90_FLAGS=-DFLASHCUTE_SM90_FWD_PLAIN_TURNS=1;-DFLASHCUTE_SM90_FWD_BLOCK_N_MASKED=128".
# Build each with: cmake -S . -B build/ab-NAME -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLASHCUTE_ARCHS=90a
#   -DFLASHCUTE_DTYPES=bf16 -DFLASHCUTE_HEAD_DIMS=64 -DFLASHCUTE_BUILD_TESTS=OFF -DFLASHCUTE_BUILD_APPS=ON
#   -DFLASHCUTE_BUILD_PYTHON=OFF -DFLASHCUTE_PTXAS_VERBOSE=ON [the flags] && ninja -C build/ab-NAME flashcute_cli
#   (~4 min each on 2 cores); build/vbin/NAME/flashcute -> build/vbin.tar.xz.
# The turns are named barriers among the three consumer warpgroups: a miscounted arrive hangs, so
# synccheck / racecheck and the masked fp64 list come before any timing.
source bench/device_lib.sh
call_setup
bins main m128 m128t > $O/r/bins.txt
export DEADLINE=${CALL_DEADLINE:-560} CHK_TIMEOUT=60
for V in m128 m128t; do
  {
    san synccheck 64 --batch 2 --heads 8 --seqlen 3000 --causal --fwd-workspace yes
    SAN_TIMEOUT=90 san racecheck 64 --batch 1 --heads 8 --seqlen 2048 --causal --fwd-workspace yes
    san memcheck 64 --batch 2 --heads 8 --seqlen 4100 --fwd-workspace yes
  } > $O/r/sanitizer-$V.txt 2>&1
  { chk_masked64; chk_full64; } > $O/r/checks-$V.txt
done
for f in $O/r/sanitizer-*.txt $O/r/checks-*.txt; do tally $f; done | tee $O/r/tally.txt
pack
timeout $(left 200) python3 bench/ab_locked.py --deadline $(( $(left 200) - 10 )) --bin-dir $B --variants main,m128,m128t \
  --case 64:yes:2048 --case 64:yes:4096 --case 64:yes:16384 --case 64:no:8192 --rounds 2 \
  --json $O/r/locked.json > $O/r/locked.md 2> $O/r/locked.log
echo "locked rc=$? at $SECONDS s"; cat $O/r/locked.md
pack
export STEADY_DEADLINE=$(( DEADLINE - 60 )) STEADY_TIMEOUT=80
steady_part steady-2k main,m128,m128t 1250 bf16 2 64:yes:2048
steady_part steady-4k main,m128,m128t 625 bf16 2 64:yes:4096 64:no:4096
pack && rm -rf $O/r
echo "all done at $SECONDS s"
