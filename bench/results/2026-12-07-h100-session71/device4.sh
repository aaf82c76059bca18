#!/usr/bin/env bash
# Session 71, call 4: d 128's persistent kernel with the early Q release (-DFLASHCUTE_SM90_FWD_EARLY_Q=1,
# `eq`; session 22 measured it at the steady state: 0.98-1.02) against main's kernels (`base`) at ncu's
# locked clock, bf16, the rows it reaches (512-8k with a workspace: the persistent kernel), 2 rounds.
source bench/device_lib.sh
call_setup
bins base eq > $O/r/bins.txt
DEADLINE=200
C=(); for s in 512 1024 2048 4096 8192; do C+=(--case 128:no:$s --case 128:yes:$s); done
timeout $(left 190) python3 bench/ab_locked.py --deadline 160 --bin-dir $B --variants base,eq "${C[@]}" \
  --rounds 2 --json $O/r/locked-eq.json > $O/r/locked-eq.md 2> $O/r/locked-eq.log
echo "locked-eq rc=$? at $SECONDS s"; cat $O/r/locked-eq.md
pack && rm -rf $O/r
