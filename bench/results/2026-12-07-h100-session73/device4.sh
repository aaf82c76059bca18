#!/usr/bin/env bash
# Session 73, call 4: d 128's early Q release up to 2k keys (FLASHCUTE_SM90_FWD_D128_EARLY_Q_MAX, the
# tree to land). Carried: build/vbin.tar.xz with base (release off), eq (release at every length,
# calls 1-3's) and eqs (this tree: two plain persistent kernels, with the release up to 2k keys and
# without it beyond), and build/tests.tar.xz (this tree's GPU tests, fp16 + bf16, d 128, 90a).
# To build them on the CPU machine (about 10 min on 2 cores, then ~4 min per CLI):
#   cmake -S . -B build/gpu-eqs -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLASHCUTE_ARCHS=90a "-DFLASHCUTE_DTYPES=fp16;bf16" \
#     -DFLASHCUTE_HEAD_DIMS=128 -DFLASHCUTE_BUILD_TESTS=ON -DFLASHCUTE_BUILD_APPS=ON -DFLASHCUTE_PTXAS_VERBOSE=ON \
#     -DFLASHCUTE_LINEINFO=ON -DFLASHCUTE_SM90_FLAGS=-DFLASHCUTE_SM90_FWD_EARLY_Q=1 && ninja -C build/gpu-eqs
#   (eqs = build/gpu-eqs/apps/flashcute; the tests: tar of build/gpu-eqs/tests/gpu_test_* | xz -> build/tests.tar.xz),
#   base: the same CLI with -DFLASHCUTE_SM90_FWD_EARLY_Q=0, eq: with =1 and -DFLASHCUTE_SM90_FWD_D128_EARLY_Q_MAX=0
#   (FLASHCUTE_BUILD_TESTS=OFF, target flashcute_cli); build/vbin/<name>/flashcute -> build/vbin.tar.xz.
# 1. The GPU tests (the two grids in shards, every executable at once) beside compute-sanitizer on
#    eqs's kernel past the limit and fp64 checks (the standard d 128 list runs both kernels).
# 2. ab_locked base / eq / eqs at non-causal 512 (the release) and causal 4k (past the limit).
source bench/device_lib.sh
call_setup
bins base eq eqs > $O/r/bins.txt
DEADLINE=${CALL_DEADLINE:-300}
export CHK_TIMEOUT=60
gtest_carried gpu_test_fwd_grid:6 gpu_test_fwd_edge:3 &
tests_pid=$!
V=eqs
{
  san memcheck 128 --batch 2 --heads 8 --seqlen 3000 --causal --fwd-workspace yes
  san synccheck 128 --batch 2 --heads 8 --seqlen 4000 --fwd-workspace yes
  san initcheck 128 --batch 2 --heads 8 --seqlen 3000 --fwd-workspace yes
  SAN_TIMEOUT=90 san racecheck 128 --batch 1 --heads 8 --seqlen 3000 --causal --fwd-workspace yes
  SAN_TIMEOUT=90 san racecheck 128 --batch 4 --heads 32 --seqlen 900 --fwd-workspace yes
  DTYPE=fp16 SAN_TIMEOUT=90 san racecheck 128 --batch 1 --heads 8 --seqlen 2500 --fwd-workspace yes
} > $O/r/sanitizer-eqs.txt 2>&1
chk_std 128 > $O/r/checks-eqs.txt
DTYPE=fp16 chk 128 "--seqlen 2048 --fwd-workspace yes" "--seqlen 2049 --causal --fwd-workspace yes" \
  "--seqlen-q 1000 --seqlen-k 2100 --causal --fwd-workspace yes" >> $O/r/checks-eqs.txt
wait $tests_pid
for f in $O/r/sanitizer-*.txt $O/r/checks-*.txt $O/r/gtest.txt; do tally $f; done | tee $O/r/tally.txt
echo "checks done at $SECONDS s"
pack
timeout $(left 120) python3 bench/ab_locked.py --deadline $(( $(left 120) - 10 )) --bin-dir $B --variants base,eq,eqs \
  --case 128:yes:4096 --case 128:no:512 --rounds 2 --json $O/r/locked-eqs.json > $O/r/locked-eqs.md 2> $O/r/locked-eqs.log
echo "locked-eqs rc=$? at $SECONDS s"; cat $O/r/locked-eqs.md
pack && rm -rf $O/r
echo "all done at $SECONDS s"
