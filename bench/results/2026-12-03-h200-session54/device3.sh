#!/usr/bin/env bash
# Session 54, call 3 (H200). (1) The --scale 300 checks again with the CLI's LSE check by TESTING.md's
# rule (call 1's CLI compared |lse - golden| with an absolute 1e-3, which main's kernels fail there
# too: call 1b). (2) Speed of FLASHCUTE_SM90_FWD_PLAIN_SUM_CHECK=1 (ps64 / ps64h) against it off
# (base64 / base64h, main's kernels), ab_steady with cuDNN, 3 rounds: the rows session 53 did not
# measure (bf16 causal 2k, 16k; fp16 causal 4k). (3) The two racecheck runs that call 1's 60 s cut,
# smaller and with more time (they read K in the scalar recompute, instrumented access by access).
O=${OUT:-gpu-out}; mkdir -p $O/r
tar xJf build/vbin.tar.xz -C build
source bench/device_lib.sh
B=build/vbin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
bins base64 ps64 psr64 base64h ps64h > $O/r/bins.txt
BIG=("--seqlen 3000 --causal --scale 300 --fwd-workspace yes" "--seqlen 2048 --causal --scale 300 --fwd-workspace no"
  "--seqlen 3000 --scale 300 --fwd-workspace yes" "--seqlen 2300 --causal --scale 30 --fwd-workspace yes")
for V in ps64 psr64; do chk 64 "${BIG[@]}" > $O/r/checks-big-$V.txt; tally $O/r/checks-big-$V.txt; done
V=ps64h; DTYPE=fp16 chk 64 "${BIG[@]}" > $O/r/checks-big-$V.txt; tally $O/r/checks-big-$V.txt
pack; echo "checks done at $SECONDS s"
STEADY_DEADLINE=${STEADY_DEADLINE:-330}
steady_part ab64-bf16-c2k base64,ps64 1200 bf16 3 64:yes:2048
pack
steady_part ab64-bf16-c16k base64,ps64 150 bf16 3 64:yes:16384
pack
steady_part ab64-fp16-c4k base64h,ps64h 600 fp16 3 64:yes:4096
pack
S=$O/r/sanitizer.txt
V=ps64; [ $SECONDS -lt 380 ] && SAN_TIMEOUT=100 san racecheck 64 --batch 1 --heads 1 --seqlen 2048 --causal --scale 30 --fwd-workspace yes >> $S
pack
V=psr64; [ $SECONDS -lt 400 ] && SAN_TIMEOUT=100 san racecheck 64 --batch 1 --heads 1 --seqlen 2048 --causal --fwd-workspace yes >> $S
[ -f $S ] && tally $S
pack && rm -rf $O/r
