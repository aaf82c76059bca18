#!/usr/bin/env bash
# Session 74, call 1: d 128's early Q release up to 2k keys, on by default in this tree (d 128's row
# flipped to early_q_choice(true); FLASHCUTE_SM90_FWD_D128_EARLY_Q_MAX 2048). Session 73's unrun device4.sh (this is now its only copy)
# plus the steady-state rows it changes. Carried (built on the CPU machine):
#   build/tests.tar.xz: this tree's GPU test executables (fp16 + bf16, d 128, sm_90a, default flags);
#   build/vbin.tar.xz: eqs (this tree's CLI, fp16 + bf16), base (bf16, -DFLASHCUTE_SM90_FWD_EARLY_Q=0:
#   main's kernels), eq (bf16, =1 with -DFLASHCUTE_SM90_FWD_D128_EARLY_Q_MAX=0: the release at every
#   length, session 73's eq).
# 1. The GPU tests (grids in shards, every executable at once) beside compute-sanitizer on eqs past the
#    limit and fp64 checks (chk_std 128 crosses the limit both ways).
# 2. ab_locked base / eq / eqs at causal 4k (eqs should read base) and non-causal 512 (eqs = eq).
#    Beside them, the package's pytest suite on a module linked on build/lib90.tar.xz (libflashcute.a of
#    this tree built on the CPU machine: sm_90a, bf16 + fp16, d 64 / 128 / 256; other buckets skip).
# 3. ab_steady beside cuDNN at the rows the release changes (d 128, 512-2k; base,eqs in bf16, then eqs in
#    fp16 while time is left).
source bench/device_lib.sh
call_setup
bins base eq eqs > $O/r/bins.txt
export DEADLINE=${CALL_DEADLINE:-560}
export CHK_TIMEOUT=60
gtest_carried gpu_test_fwd_grid:6 gpu_test_fwd_edge:3 &
tests_pid=$!
( prebuilt_module > $O/r/module.txt 2>&1 && python3 -c 'import flashcute._C as C; print(C.build_config())' >> $O/r/module.txt 2>&1
  timeout $(left 300) python3 -m pytest -q -rs tests/python > $O/r/pytest.txt 2>&1; echo "pytest rc=$?" >> $O/r/module.txt ) &
py_pid=$!
V=eqs
{
  san memcheck 128 --batch 2 --heads 8 --seqlen 3000 --causal --fwd-workspace yes
  san synccheck 128 --batch 2 --heads 8 --seqlen 4000 --fwd-workspace yes
  san initcheck 128 --batch 2 --heads 8 --seqlen 3000 --fwd-workspace yes
  san memcheck 128 --batch 2 --heads 8 --seqlen 1500 --fwd-workspace yes
  SAN_TIMEOUT=90 san racecheck 128 --batch 1 --heads 8 --seqlen 3000 --causal --fwd-workspace yes
  SAN_TIMEOUT=90 san racecheck 128 --batch 4 --heads 32 --seqlen 900 --fwd-workspace yes
  DTYPE=fp16 SAN_TIMEOUT=90 san racecheck 128 --batch 1 --heads 8 --seqlen 2500 --fwd-workspace yes
} > $O/r/sanitizer-eqs.txt 2>&1
chk_std 128 > $O/r/checks-eqs.txt
DTYPE=fp16 chk 128 "--seqlen 2048 --fwd-workspace yes" "--seqlen 2049 --causal --fwd-workspace yes" \
  "--seqlen-q 1000 --seqlen-k 2100 --causal --fwd-workspace yes" "--seqlen-q 3000 --seqlen-k 2048" >> $O/r/checks-eqs.txt
# Which kernel each side of the limit launches: the mangled name ncu reports (bf16; the release is the
# FwdTileConfig field that differs between the plain persistent kernels, sass-eqs-vs-base.md).
for a in "--batch 8 --seqlen 2048" "--batch 8 --seqlen 2049" "--batch 4 --seqlen 4096 --causal" "--batch 32 --seqlen 512"; do
  # shellcheck disable=SC2086  # $a is a list of CLI arguments
  echo "$a: $(timeout 40 ncu --kernel-name regex:fwd_kernel --launch-count 1 --section LaunchStats --print-kernel-base mangled \
    --csv --page details $B/eqs/flashcute run --backend sm90 --d 128 --heads 16 $a --iters 1 --check-heads 1 --fwd-workspace yes 2>&1 \
    | grep -o '_ZN9flashcute4sm9010fwd_kernel[^"]*' | head -1)"
done > $O/r/dispatch.txt
wait $tests_pid $py_pid
cat $O/r/module.txt; tail -n 4 $O/r/pytest.txt
for f in $O/r/sanitizer-*.txt $O/r/checks-*.txt $O/r/gtest.txt; do tally $f; done | tee $O/r/tally.txt
echo "checks done at $SECONDS s"
pack
timeout $(left 110) python3 bench/ab_locked.py --deadline $(( $(left 110) - 10 )) --bin-dir $B --variants base,eq,eqs \
  --case 128:yes:4096 --case 128:no:512 --rounds 2 --json $O/r/locked-eqs.json > $O/r/locked-eqs.md 2> $O/r/locked-eqs.log
echo "locked-eqs rc=$? at $SECONDS s"; cat $O/r/locked-eqs.md
pack
export STEADY_DEADLINE=$(( DEADLINE - 60 )) STEADY_TIMEOUT=70
for sn in 512:5000 1024:2500 2048:1250; do
  s=${sn%:*}; n=${sn#*:}
  steady_part steady-bf16-$s base,eqs $n bf16 2 128:no:$s 128:yes:$s
  pack
done
for sn in 512:5000 1024:2500 2048:1250; do
  s=${sn%:*}; n=${sn#*:}
  steady_part steady-fp16-$s eqs $n fp16 2 128:no:$s 128:yes:$s
  pack
done
pack && rm -rf $O/r
echo "all done at $SECONDS s"
