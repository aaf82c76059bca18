#!/usr/bin/env bash
# Session 43, call 4 (H200): the steady-state grid rows that call 2 skipped for time (bf16 d 256, round 1)
# (call 3 ran this script with a part line left over from device2.sh and was cut off by its 200 s
# limit). Call 1's `grid` binary (main's kernels) against cuDNN.
O=${OUT:-gpu-out}; mkdir -p $O/r
B=build/abbin
mkdir -p $B/grid && gunzip -c .abcarry/grid.gz > $B/grid/flashcute && chmod +x $B/grid/flashcute
echo "--fwd-workspace zeroed" > $B/grid/args
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
pack() { sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*.log 2>/dev/null; tar czf $O/r.tgz -C $O r; }
part() {
  local dt=$1 d=$2 n=$3; shift 3
  [ $SECONDS -gt 100 ] && { echo "skip $dt d$d x$n (time)"; return; }
  local t0=$SECONDS
  timeout $((170 - SECONDS)) python3 bench/ab_steady.py --bin-dir $B --variants grid --peer sdpa_cudnn "$@" --iters 500 \
    --rounds $n --dtype $dt > $O/r/steady-$dt-d$d-x$n.log 2>&1
  echo "steady $dt d$d x$n rc=$? ($((SECONDS - t0)) s)"
  pack
}
part bf16 256 1 --case 256:no:8192 --case 256:no:16384 --case 256:yes:512 --case 256:yes:1024 --case 256:yes:2048 --case 256:yes:4096 --case 256:yes:8192 --case 256:yes:16384
pack && rm -rf $O/r
