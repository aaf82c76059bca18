#!/usr/bin/env bash
# Session 72, call 1: A/Bs of CLI builds made on the CPU machine, at ncu's locked clock (bf16).
#   base, eq, d128s3   d 128: main's kernels; -DFLASHCUTE_SM90_FWD_EARLY_Q=1 (the persistent kernels
#                      free Q's space after the tile's last S: session 71's call 4, which did not run);
#                      -DFLASHCUTE_SM90_FWD_D128_STAGES=3 (three K/V stages)
#   b64, s3            d 64: main's kernels; -DFLASHCUTE_SM90_FWD_D64_STAGES=3
#   b256, cl512        d 256: main's kernels; -DFLASHCUTE_SM90_FWD_CLUSTER_MIN_SEQLEN_K=512 (the
#                      non-causal rows from 512 keys on the two-CTA clusters that share K / V by
#                      multicast, main's from 4096)
# 1. fp64 checks (in parallel): eq on the standard d 128 list, d128s3 on four shapes of the 8k / 16k
#    rows' non-persistent kernel, s3 on d 64's masked-kernel list, cl512 on nine unmasked d 256
#    shapes from 512 keys and the standard d 256 list.
# 2. In this order, each cut where the call runs out of time: ab_locked (2 rounds) cl512 / b256 at
#    non-causal 512-2k; ab_steady (the power cap's clocks) cl512 / b256 beside cuDNN at 512-2k;
#    ab_locked eq / base on the persistent kernels' rows (512-4k, causal 8k); s3 / b64 on the masked
#    kernel's rows (causal 2k-16k, non-causal 8k / 16k); d128s3 / base at 8k / 16k.
source bench/device_lib.sh
call_setup
bins base eq d128s3 b64 s3 b256 cl512 > $O/r/bins.txt
DEADLINE=${CALL_DEADLINE:-520}
export CHK_TIMEOUT=90
( V=s3; f=$O/r/checks-s3.txt; chk_masked64 > $f ) &
( V=eq; f=$O/r/checks-eq.txt; chk_std 128 > $f ) &
( V=d128s3; f=$O/r/checks-d128s3.txt; chk 128 "--seqlen 9000 --batch 1 --heads 2 --check-heads 2" \
    "--seqlen 9000 --causal --batch 1 --heads 2 --check-heads 2" "--seqlen 3001 --causal --fwd-workspace no" \
    "--seqlen-q 2100 --seqlen-k 1300 --fwd-workspace no" > $f ) &
( V=cl512; f=$O/r/checks-cl512.txt; chk 256 "--seqlen 512 --fwd-workspace yes" "--seqlen 512 --fwd-workspace no" \
    "--seqlen 1024 --fwd-workspace yes" "--seqlen 1000 --fwd-workspace no" "--seqlen 2048 --heads-kv 2 --fwd-workspace yes" \
    "--seqlen-q 512 --seqlen-k 1500 --fwd-workspace yes" "--seqlen-q 700 --seqlen-k 600 --fwd-workspace no" \
    "--seqlen 1536 --heads-kv 1 --fwd-workspace no" "--seqlen 600 --scale 30 --fwd-workspace yes" > $f; chk_std 256 >> $f ) &
wait
for f in $O/r/checks-*.txt; do tally $f; done | tee $O/r/checks-tally.txt
echo "checks done at $SECONDS s"
pack
timeout $(left 60) python3 bench/ab_locked.py --deadline 50 --bin-dir $B --variants b256,cl512 \
  --case 256:no:512 --case 256:no:1024 --case 256:no:2048 \
  --rounds 2 --json $O/r/locked-cl512.json > $O/r/locked-cl512.md 2> $O/r/locked-cl512.log
echo "locked-cl512 rc=$? at $SECONDS s"; cat $O/r/locked-cl512.md; tail -3 $O/r/locked-cl512.log
pack
export STEADY_DEADLINE=300 STEADY_TIMEOUT=$(left 100)
steady_part steady-cl512 b256,cl512 2000 bf16 2 256:no:512 256:no:1024 256:no:2048
pack
C=(); for s in 512 1024 2048 4096; do C+=(--case 128:no:$s --case 128:yes:$s); done; C+=(--case 128:yes:8192)
timeout $(left 140) python3 bench/ab_locked.py --deadline $(( $(left 140) - 12 )) --bin-dir $B --variants base,eq "${C[@]}" \
  --rounds 2 --json $O/r/locked-eq.json > $O/r/locked-eq.md 2> $O/r/locked-eq.log
echo "locked-eq rc=$? at $SECONDS s"; cat $O/r/locked-eq.md; tail -3 $O/r/locked-eq.log
pack
C=(); for s in 2048 4096 8192 16384; do C+=(--case 64:yes:$s); done
for s in 8192 16384; do C+=(--case 64:no:$s); done
timeout $(left 100) python3 bench/ab_locked.py --deadline $(( $(left 100) - 10 )) --bin-dir $B --variants b64,s3 "${C[@]}" \
  --rounds 2 --json $O/r/locked-s3.json > $O/r/locked-s3.md 2> $O/r/locked-s3.log
echo "locked-s3 rc=$? at $SECONDS s"; cat $O/r/locked-s3.md; tail -3 $O/r/locked-s3.log
pack
timeout $(left 60) python3 bench/ab_locked.py --deadline $(( $(left 60) - 8 )) --bin-dir $B --variants base,d128s3 \
  --case 128:no:16384 --case 128:yes:16384 --case 128:yes:8192 \
  --rounds 2 --json $O/r/locked-d128s3.json > $O/r/locked-d128s3.md 2> $O/r/locked-d128s3.log
echo "locked-d128s3 rc=$? at $SECONDS s"; cat $O/r/locked-d128s3.md; tail -3 $O/r/locked-d128s3.log
pack
pack && rm -rf $O/r
echo "all done at $SECONDS s"
