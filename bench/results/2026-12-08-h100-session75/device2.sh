#!/usr/bin/env bash
# Session 75, call 2 (runs only if call 1 shows m128t ahead of main): the GPU tests of the m128t tree
# (fp16 + bf16, d 64, sm_90a; session 72's plain-turns.patch applied, built with
# "-DFLASHCUTE_SM90_FLAGS=-DFLASHCUTE_SM90_FWD_PLAIN_TURNS=1;-DFLASHCUTE_SM90_FWD_BLOCK_N_MASKED=128";
# 34 kernel reports, 0 spills, no C751x), carried as build/tests.tar.xz, beside compute-sanitizer on the
# fp16 side of the same tree's CLI (m128tf: fp16 + bf16), then ab_steady m128t beside main and cuDNN at
# the long d 64 rows call 1 did not reach.
source bench/device_lib.sh
call_setup
bins main m128t m128tf > $O/r/bins.txt
export DEADLINE=${CALL_DEADLINE:-560} CHK_TIMEOUT=60
gtest_carried gpu_test_fwd_grid:6 gpu_test_fwd_edge:3 &
tests_pid=$!
V=m128tf
{
  DTYPE=fp16 san synccheck 64 --batch 2 --heads 8 --seqlen 3000 --causal --fwd-workspace yes
  DTYPE=fp16 SAN_TIMEOUT=90 san racecheck 64 --batch 1 --heads 8 --seqlen 2048 --causal --fwd-workspace yes
  DTYPE=fp16 san initcheck 64 --batch 2 --heads 8 --seqlen 4100 --causal --fwd-workspace yes
} > $O/r/sanitizer-m128tf.txt 2>&1
DTYPE=fp16 chk_masked64 > $O/r/checks-m128tf-fp16.txt
wait $tests_pid
for f in $O/r/sanitizer-*.txt $O/r/checks-*.txt $O/r/gtest.txt; do tally $f; done | tee $O/r/tally.txt
echo "tests done at $SECONDS s"
pack
export STEADY_DEADLINE=$(( DEADLINE - 60 )) STEADY_TIMEOUT=80
steady_part steady-8k main,m128t 312 bf16 2 64:yes:8192 64:no:8192
steady_part steady-16k main,m128t 156 bf16 2 64:yes:16384 64:no:16384
pack && rm -rf $O/r
echo "all done at $SECONDS s"
