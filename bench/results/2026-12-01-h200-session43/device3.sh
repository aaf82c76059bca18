#!/usr/bin/env bash
# Session 43, call 3 (H200), as run: meant for the rows call 2 skipped (bf16 d 256); the header cut from
# device2.sh kept its first part line (fp16 d 256, two more rounds), which ran until the call's 200 s
# limit stopped it (its log came back; rounds 2-3 of fp16 d 256 where both phases ran). Call 1's
# `grid` binary (main's kernels) against cuDNN, one ab_steady run per (dtype, d, rounds needed).
O=${OUT:-gpu-out}; mkdir -p $O/r
B=build/abbin
mkdir -p $B/grid && gunzip -c .abcarry/grid.gz > $B/grid/flashcute && chmod +x $B/grid/flashcute
echo "--fwd-workspace zeroed" > $B/grid/args
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
pack() { sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*.log 2>/dev/null; tar czf $O/r.tgz -C $O r; }
part() {
  local dt=$1 d=$2 n=$3; shift 3
  [ $SECONDS -gt 530 ] && { echo "skip $dt d$d x$n (time)"; return; }
  local t0=$SECONDS
  timeout $((575 - SECONDS)) python3 bench/ab_steady.py --bin-dir $B --variants grid --peer sdpa_cudnn "$@" --iters 500 \
    --rounds $n --dtype $dt > $O/r/steady-$dt-d$d-x$n.log 2>&1
  echo "steady $dt d$d x$n rc=$? ($((SECONDS - t0)) s)"
  pack
}
part fp16 256 2 --case 256:no:512 --case 256:no:1024 --case 256:no:2048 --case 256:no:4096 --case 256:no:8192 --case 256:no:16384 --case 256:yes:512 --case 256:yes:1024 --case 256:yes:2048 --case 256:yes:4096 --case 256:yes:8192 --case 256:yes:16384
part bf16 256 1 --case 256:no:8192 --case 256:no:16384 --case 256:yes:512 --case 256:yes:1024 --case 256:yes:2048 --case 256:yes:4096 --case 256:yes:8192 --case 256:yes:16384
pack && rm -rf $O/r
