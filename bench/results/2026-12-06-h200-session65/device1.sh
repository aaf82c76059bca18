#!/usr/bin/env bash
# Session 65, call 1: session 54's two prepared A/Bs in one call, the A/Bs first (ab_steady, 3 rounds,
# cuDNN in the same rounds), then the fp64 checks of every variant (in parallel, after the timing) and
# compute-sanitizer on the variants that change dispatch. bf16 d 64 CLI builds made on the CPU machine:
#   main64  main's kernels (57899ca)
#   mf64    -DFLASHCUTE_SM90_FWD_MASKED_FULL_MIN_SEQLEN_K=4096 (unmasked plain problems >= 4k keys on the masked kernel)
#   p4, p8  -DFLASHCUTE_SM90_FWD_D64_POLY_EVERY=4 / 8 (every 4th / 8th exp2 on the FMA pipe)
#   mfp4    both mf64's and p4's switches
source bench/device_lib.sh
call_setup
bins main64 mf64 p4 p8 mfp4 > $O/r/bins.txt
export STEADY_DEADLINE=330 STEADY_TIMEOUT=90
steady_part ab64-bf16-nc8k main64,mf64,mfp4 300 bf16 3 64:no:8192
steady_part ab64-bf16-c8k main64,p4,p8 300 bf16 3 64:yes:8192
pack
steady_part ab64-bf16-nc4k main64,mf64,mfp4 600 bf16 3 64:no:4096
steady_part ab64-bf16-c4k main64,p4 600 bf16 3 64:yes:4096
pack
steady_part ab64-bf16-nc16k main64,mf64,mfp4 150 bf16 3 64:no:16384
steady_part ab64-bf16-c16k main64,p4 150 bf16 3 64:yes:16384
pack
echo "timing done at $SECONDS s"
# fp64 checks, one background job per variant (the GPU and CPU shared: correctness runs only, 150 s each).
export CHK_TIMEOUT=150
for V in mf64 p4 p8 mfp4; do
  (
    f=$O/r/checks-$V.txt
    case $V in
      mf64) chk_full64 > $f ;;
      p4 | p8) chk_masked64 > $f ;;
      mfp4) { chk_full64; chk_masked64; } > $f ;;
    esac
    chk_std 64 >> $f
  ) &
done
wait
for V in mf64 p4 p8 mfp4; do tally $O/r/checks-$V.txt; done | tee $O/r/checks-tally.txt
pack
echo "checks done at $SECONDS s"
for run in "mf64 racecheck" "mf64 memcheck" "mfp4 racecheck" "mf64 synccheck" "mfp4 memcheck"; do
  set -- $run; V=$1
  [ "$SECONDS" -gt 530 ] && { echo "skip $run (time)" >> $O/r/sanitizer.txt; continue; }
  SAN_TIMEOUT=50 SAN_ARGS="--kernel-name kns=fwd_kernel --launch-count 1" san $2 64 --batch 1 --heads 4 --seqlen 4100 --fwd-workspace yes >> $O/r/sanitizer.txt
  pack
done
tally $O/r/sanitizer.txt
pack && rm -rf $O/r
echo "all done at $SECONDS s"
