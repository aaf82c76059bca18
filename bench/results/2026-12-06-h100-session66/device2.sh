#!/usr/bin/env bash
# Session 66, call 2 (ran on nvidia-h100-x1 at the sixth try; five H100 and two H200 starts had failed,
# and the deadline below is what the session's device time left): the fp16 rows call 1 had no time for
# (2k-16k), as call 1 ran them (grid66, ours against cuDNN, 2 rounds, session 45's launches per phase); then, as time allows,
# FlashAttention-2 (SDPA's flash backend) against the same build at bf16 2k and 8k.
source bench/device_lib.sh
call_setup
bins grid66 > $O/r/bins.txt
export STEADY_DEADLINE=150 STEADY_TIMEOUT=100
for sn in 2048:1250 4096:625 8192:320 16384:160; do
  s=${sn%:*}; n=${sn#*:}
  steady_part grid-fp16-$s grid66 $n fp16 2 64:no:$s 64:yes:$s 128:no:$s 128:yes:$s 256:no:$s 256:yes:$s
  pack
done
fa2_part() {  # NAME ITERS CASES...: ab_steady against SDPA's FlashAttention-2 backend, 1 round
  local name=$1 n=$2 c cases=()
  shift 2
  [ "$SECONDS" -gt "$STEADY_DEADLINE" ] && { echo "skip $name (time)"; return; }
  for c in "$@"; do cases+=(--case "$c"); done
  timeout 100 python3 bench/ab_steady.py --bin-dir "$B" --variants grid66 --peer sdpa_flash "${cases[@]}" \
    --iters "$n" --rounds 1 --dtype bf16 --out "$O/r/$name.md" --records "$O/r/$name" > "$O/r/$name.log" 2>&1
  echo "$name rc=$?"; grep "^| [0-9]" "$O/r/$name.md"
}
fa2_part fa2-bf16-2048 1250 64:no:2048 64:yes:2048 128:no:2048 128:yes:2048 256:no:2048 256:yes:2048
pack
fa2_part fa2-bf16-8192 320 64:no:8192 64:yes:8192 128:no:8192 128:yes:8192 256:no:8192 256:yes:8192
pack && rm -rf $O/r
echo "all done at $SECONDS s"
