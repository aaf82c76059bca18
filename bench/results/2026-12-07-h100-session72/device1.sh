#!/usr/bin/env bash
# Session 72: the part of the planned call that did not run (the device time went to failed starts;
# device2.sh and device3.sh ran the rest). Ready for a next session, with build/vbin.tar.xz holding:
#   base, eq, d128s3   d 128: main's kernels; -DFLASHCUTE_SM90_FWD_EARLY_Q=1; -DFLASHCUTE_SM90_FWD_D128_STAGES=3
#   b64, s3            d 64: main's kernels; -DFLASHCUTE_SM90_FWD_D64_STAGES=3
# (bf16 CLI builds; the recipe: perf-notes, "Session 72"). eq from the tree after session 72 builds the
# release in the plain persistent kernel only.
# 1. fp64 checks (in parallel): s3 on d 64's masked-kernel list, d128s3 on four shapes of the 8k / 16k
#    rows' non-persistent kernel.
# 2. ab_locked, 2 rounds, each cut where the call runs out of time: eq / base on the rows calls 1-2 did
#    not reach (non-causal 2k / 4k, causal 4k / 8k); s3 / b64 on the masked kernel's rows (causal
#    2k-16k, non-causal 8k / 16k); d128s3 / base at 8k / 16k.
source bench/device_lib.sh
call_setup
bins base eq d128s3 b64 s3 > $O/r/bins.txt
DEADLINE=${CALL_DEADLINE:-450}
export CHK_TIMEOUT=90
( V=s3; f=$O/r/checks-s3.txt; chk_masked64 > $f ) &
( V=d128s3; f=$O/r/checks-d128s3.txt; chk 128 "--seqlen 9000 --batch 1 --heads 2 --check-heads 2" \
    "--seqlen 9000 --causal --batch 1 --heads 2 --check-heads 2" "--seqlen 3001 --causal --fwd-workspace no" \
    "--seqlen-q 2100 --seqlen-k 1300 --fwd-workspace no" > $f ) &
wait
for f in $O/r/checks-*.txt; do tally $f; done | tee $O/r/checks-tally.txt
echo "checks done at $SECONDS s"
pack
timeout $(left 100) python3 bench/ab_locked.py --deadline $(( $(left 100) - 10 )) --bin-dir $B --variants base,eq \
  --case 128:no:2048 --case 128:no:4096 --case 128:yes:4096 --case 128:yes:8192 \
  --rounds 2 --json $O/r/locked-eq3.json > $O/r/locked-eq3.md 2> $O/r/locked-eq3.log
echo "locked-eq3 rc=$? at $SECONDS s"; cat $O/r/locked-eq3.md
pack
C=(); for s in 2048 4096 8192 16384; do C+=(--case 64:yes:$s); done
for s in 8192 16384; do C+=(--case 64:no:$s); done
timeout $(left 100) python3 bench/ab_locked.py --deadline $(( $(left 100) - 10 )) --bin-dir $B --variants b64,s3 "${C[@]}" \
  --rounds 2 --json $O/r/locked-s3.json > $O/r/locked-s3.md 2> $O/r/locked-s3.log
echo "locked-s3 rc=$? at $SECONDS s"; cat $O/r/locked-s3.md
pack
timeout $(left 60) python3 bench/ab_locked.py --deadline $(( $(left 60) - 8 )) --bin-dir $B --variants base,d128s3 \
  --case 128:no:16384 --case 128:yes:16384 --case 128:yes:8192 \
  --rounds 2 --json $O/r/locked-d128s3.json > $O/r/locked-d128s3.md 2> $O/r/locked-d128s3.log
echo "locked-d128s3 rc=$? at $SECONDS s"; cat $O/r/locked-d128s3.md
pack && rm -rf $O/r
echo "all done at $SECONDS s"
