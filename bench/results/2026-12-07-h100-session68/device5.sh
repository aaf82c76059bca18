#!/usr/bin/env bash
# Session 68, call 5 (the Python-module grid never started; this is the short stand-in): ours (main68,
# the CLI) against SDPA's FlashAttention-2 backend at the steady state by ab_steady, bf16, 1 round.
# FlexAttention is not among ab_steady's peers (it needs its compile warm-up), so it is not here.
source bench/device_lib.sh; call_setup; bins main68 > $O/r/bins.txt
cs=""; for c in 128:no:8192 128:yes:8192 64:no:8192 64:yes:8192 128:no:2048 128:yes:2048 64:no:2048; do cs="$cs --case $c"; done
# shellcheck disable=SC2086  # cs is a list of options
timeout 130 python3 bench/ab_steady.py --bin-dir $B --variants main68 --peer sdpa_flash $cs --iters 320 --rounds 1 --dtype bf16 \
  --out $O/r/fa2-bf16.md --records $O/r/fa2-bf16 > $O/r/fa2-bf16.log 2>&1
echo "rc=$? $SECONDS"; grep '^| [0-9]' $O/r/fa2-bf16.md; pack
