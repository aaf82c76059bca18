#!/usr/bin/env bash
# Session 73, call 1. Carried: build/vbin.tar.xz (CLI builds, 90a; recipes in the README)
#   eq      fp16 + bf16, d 128: this tree (d 128's early Q release on), from the test build below
#   base    fp16 + bf16, d 128: this tree with -DFLASHCUTE_SM90_FWD_EARLY_Q=0 (main before the change)
#   b64, s3 bf16, d 64: this tree; -DFLASHCUTE_SM90_FWD_D64_STAGES=3
#   d128s3  bf16, d 128: this tree with -DFLASHCUTE_SM90_FWD_D128_STAGES=3
# and build/tests.tar.xz: the GPU test executables of the same eq build (fp16 + bf16, d 128, 90a).
# 1. The GPU tests (every executable at once) beside compute-sanitizer on eq and fp64 checks.
# 2. ab_locked eq / base on d 128's rows session 72 did not reach, then fp16 at 512.
# 3. ab_locked s3 / b64, d128s3 / eq, each cut where the call runs out of time.
source bench/device_lib.sh
call_setup
mkdir -p build/t && tar xJf build/tests.tar.xz -C build/t
bins base eq b64 s3 d128s3 > $O/r/bins.txt
DEADLINE=${CALL_DEADLINE:-560}
export CHK_TIMEOUT=90
pids=()
for exe in build/t/gpu_test_*; do
  ( timeout $(left 330) $exe --gtest_brief=1 > $O/r/gtest-$(basename $exe).log 2>&1; echo "rc=$? $(basename $exe) $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $O/r/gtest-$(basename $exe).log | tr '\n' ' ')" >> $O/r/gtest.txt ) &
  pids+=($!)
done
V=eq
{
  san memcheck 128 --batch 2 --heads 8 --seqlen 512 --fwd-workspace yes
  san memcheck 128 --batch 2 --heads 8 --seqlen 3000 --fwd-workspace yes
  san memcheck 128 --batch 4 --heads 32 --seqlen 700 --causal --fwd-workspace yes
  san synccheck 128 --batch 4 --heads 32 --seqlen 1000 --fwd-workspace yes
  san synccheck 128 --batch 4 --heads 32 --seqlen 2000 --causal --fwd-workspace yes
  san initcheck 128 --batch 2 --heads 16 --seqlen 1000 --fwd-workspace no
  san initcheck 128 --batch 2 --heads 8 --seqlen 3000 --fwd-workspace yes
  SAN_TIMEOUT=120 san racecheck 128 --batch 4 --heads 32 --seqlen 900 --fwd-workspace yes
  SAN_TIMEOUT=120 san racecheck 128 --batch 1 --heads 8 --seqlen 3000 --causal --fwd-workspace yes
  DTYPE=fp16 san memcheck 128 --batch 2 --heads 8 --seqlen 512 --causal --fwd-workspace yes
  DTYPE=fp16 SAN_TIMEOUT=120 san racecheck 128 --batch 2 --heads 16 --seqlen 1000 --fwd-workspace yes
} > $O/r/sanitizer-eq.txt 2>&1
chk_std 128 > $O/r/checks-eq.txt
DTYPE=fp16 chk 128 "--seqlen 512 --fwd-workspace yes" "--seqlen 700 --causal --fwd-workspace yes" \
  "--seqlen 3000 --fwd-workspace yes" "--seqlen-q 1000 --seqlen-k 400 --causal --fwd-workspace yes" >> $O/r/checks-eq.txt
wait "${pids[@]}"
for f in $O/r/sanitizer-*.txt $O/r/checks-*.txt $O/r/gtest.txt; do tally $f; done | tee $O/r/tally.txt
echo "checks done at $SECONDS s"
pack
timeout $(left 200) python3 bench/ab_locked.py --deadline $(( $(left 200) - 10 )) --bin-dir $B --variants base,eq \
  --case 128:no:2048 --case 128:yes:4096 --case 128:no:4096 --case 128:yes:8192 --case 128:no:8192 \
  --rounds 2 --json $O/r/locked-eq.json > $O/r/locked-eq.md 2> $O/r/locked-eq.log
echo "locked-eq rc=$? at $SECONDS s"; cat $O/r/locked-eq.md
timeout $(left 80) python3 bench/ab_locked.py --deadline $(( $(left 80) - 8 )) --bin-dir $B --variants base,eq --dtype fp16 \
  --case 128:no:512 --case 128:yes:512 --rounds 2 --json $O/r/locked-eq-fp16.json > $O/r/locked-eq-fp16.md 2> $O/r/locked-eq-fp16.log
echo "locked-eq-fp16 rc=$? at $SECONDS s"; cat $O/r/locked-eq-fp16.md
pack
C=(); for s in 2048 8192 16384; do C+=(--case 64:yes:$s); done; C+=(--case 64:no:8192)
timeout $(left 100) python3 bench/ab_locked.py --deadline $(( $(left 100) - 10 )) --bin-dir $B --variants b64,s3 "${C[@]}" \
  --rounds 2 --json $O/r/locked-s3.json > $O/r/locked-s3.md 2> $O/r/locked-s3.log
echo "locked-s3 rc=$? at $SECONDS s"; cat $O/r/locked-s3.md
pack
timeout $(left 60) python3 bench/ab_locked.py --deadline $(( $(left 60) - 8 )) --bin-dir $B --variants eq,d128s3 \
  --case 128:no:16384 --case 128:yes:8192 --rounds 2 --json $O/r/locked-d128s3.json > $O/r/locked-d128s3.md 2> $O/r/locked-d128s3.log
echo "locked-d128s3 rc=$? at $SECONDS s"; cat $O/r/locked-d128s3.md
pack && rm -rf $O/r
echo "all done at $SECONDS s"
