#!/usr/bin/env bash
# Session 72, call 1 as it ran: device1.sh cut to what fits the device time left after the failed
# starts (494 s). Same builds (build/vbin.tar.xz).
# 1. fp64 checks (in parallel): cl512 on nine unmasked d 256 shapes from 512 keys and the standard
#    d 256 list; eq on the standard d 128 list.
# 2. ab_locked (2 rounds) cl512 / b256 at non-causal 512-2k; ab_steady (the power cap's clocks)
#    cl512 / b256 beside cuDNN at 512-2k; ab_locked eq / base at 512 / 1k / 2k (causal and not),
#    each cut where the call runs out of time.
source bench/device_lib.sh
call_setup
bins base eq b256 cl512 > $O/r/bins.txt
DEADLINE=${CALL_DEADLINE:-260}
export CHK_TIMEOUT=60
( V=cl512; f=$O/r/checks-cl512.txt; chk_clusters256 > $f; chk_std 256 >> $f ) &
( V=eq; f=$O/r/checks-eq.txt; chk_std 128 > $f ) &
wait
for f in $O/r/checks-*.txt; do tally $f; done | tee $O/r/checks-tally.txt
echo "checks done at $SECONDS s"
pack
timeout $(left 50) python3 bench/ab_locked.py --deadline 42 --bin-dir $B --variants b256,cl512 \
  --case 256:no:512 --case 256:no:1024 --case 256:no:2048 \
  --rounds 2 --json $O/r/locked-cl512.json > $O/r/locked-cl512.md 2> $O/r/locked-cl512.log
echo "locked-cl512 rc=$? at $SECONDS s"; cat $O/r/locked-cl512.md; tail -3 $O/r/locked-cl512.log
pack
export STEADY_DEADLINE=$(( DEADLINE - 60 )) STEADY_TIMEOUT=$(left 90)
steady_part steady-cl512 b256,cl512 2000 bf16 2 256:no:512 256:no:1024 256:no:2048
pack
C=(); for s in 512 1024 2048; do C+=(--case 128:no:$s --case 128:yes:$s); done
timeout $(left 90) python3 bench/ab_locked.py --deadline $(( $(left 90) - 8 )) --bin-dir $B --variants base,eq "${C[@]}" \
  --rounds 2 --json $O/r/locked-eq.json > $O/r/locked-eq.md 2> $O/r/locked-eq.log
echo "locked-eq rc=$? at $SECONDS s"; cat $O/r/locked-eq.md; tail -3 $O/r/locked-eq.log
pack && rm -rf $O/r
echo "all done at $SECONDS s"
