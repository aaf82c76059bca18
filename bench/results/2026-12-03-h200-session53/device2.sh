#!/usr/bin/env bash
# Session 53, call 2 (H200): an upper bound for the plain loop's interior blocks through the sum
# check. nr64 (bf16 d 64 CLI build of plain-sum-check.patch with FLASHCUTE_SM90_FWD_PLAIN_SUM_CHECK=2:
# the sum check with NO recompute, wrong where the recompute is needed: huge logits, rows whose
# first visible keys come after the tile's first block) against main's kernels (base64). The build
# with the recompute (=1) was not run: NVVM outlined the tile body (local-memory closures, 164-byte
# spills). fp64 checks on ordinary inputs (sanity only), then ab_steady with cuDNN.
O=${OUT:-gpu-out}; mkdir -p $O/r
tar xJf build/vbin.tar.xz -C build
source bench/device_lib.sh
B=build/vbin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
bins base64 nr64 > $O/r/bins.txt
V=nr64
chk 64 "--seqlen 2048 --causal --fwd-workspace yes" "--seqlen 4096 --causal --fwd-workspace no" \
  "--seqlen-q 4100 --seqlen-k 3000 --causal --fwd-workspace yes" "--seqlen 2900 --window-left 300 --window-right 100 --fwd-workspace yes" \
  "--seqlen 4096 --causal --heads-kv 1 --fwd-workspace yes" "--seqlen-q 3052 --seqlen-k 3000 --causal --fwd-workspace no" \
  "--seqlen 3000 --causal --window-left 150 --fwd-workspace no" "--seqlen 8192 --causal --batch 1 --heads 8" \
  "--seqlen 2300 --causal --scale 30 --fwd-workspace yes" > $O/r/checks-$V.txt
tally $O/r/checks-$V.txt
pack
echo "checks done at $SECONDS s"
STEADY_DEADLINE=${STEADY_DEADLINE:-330}
steady_part ab64-bf16-c8k base64,nr64 300 bf16 3 64:yes:8192
steady_part ab64-bf16-c4k base64,nr64 600 bf16 3 64:yes:4096
pack
steady_part ab64-bf16-c16k base64,nr64 150 bf16 3 64:yes:16384
steady_part ab64-bf16-c2k base64,nr64 1200 bf16 3 64:yes:2048
pack && rm -rf $O/r
