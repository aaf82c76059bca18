#!/usr/bin/env bash
# Session 65, call 3: the masked kernel for d 64's unmasked rows from 4096 keys (now the default) in
# fp16 and without a workspace. Binaries (CPU machine, d 64 CLI builds): main64h fp16 with
# -DFLASHCUTE_SM90_FWD_MASKED_FULL_MIN_SEQLEN_K=0 (the overlapped kernels, main's dispatch before this
# session), cur64h fp16 of this tree; main64 / mf64 call 1's bf16 builds, here also run with
# "--fwd-workspace no" (main64nw / mf64nw: the same binaries, no workspace: the overlapped
# non-persistent kernel against the masked kernel's one-CTA-per-tile grid).
source bench/device_lib.sh
call_setup
bins main64h cur64h main64 mf64 > $O/r/bins.txt
for v in main64 mf64; do
  mkdir -p $B/${v}nw && cp $B/$v/flashcute $B/${v}nw/ && echo "--fwd-workspace no" > $B/${v}nw/args
done
# (Trimmed to the device time left: fp16 16k and bf16 8k without a workspace not run.)
export STEADY_DEADLINE=200 STEADY_TIMEOUT=80
steady_part ab64-fp16-nc4k main64h,cur64h 600 fp16 3 64:no:4096
steady_part ab64-fp16-nc8k main64h,cur64h 300 fp16 3 64:no:8192
pack
steady_part ab64-bf16-nc4k-nows main64nw,mf64nw 600 bf16 3 64:no:4096
steady_part ab64-bf16-nc16k-nows main64nw,mf64nw 150 bf16 3 64:no:16384
pack
echo "timing done at $SECONDS s"
export CHK_TIMEOUT=150
(V=cur64h DTYPE=fp16; { chk_full64; chk_std 64; } > $O/r/checks-cur64h.txt) &
(V=mf64; chk 64 "--seqlen 4096 --fwd-workspace no" "--seqlen-q 3000 --seqlen-k 6001 --heads-kv 2 --fwd-workspace no" \
   "--seqlen 16384 --batch 1 --heads 2 --fwd-workspace no" "--seqlen 5000 --scale 300 --fwd-workspace no" > $O/r/checks-mf64-nows.txt) &
wait
tally $O/r/checks-cur64h.txt; tally $O/r/checks-mf64-nows.txt
pack
V=cur64h DTYPE=fp16 SAN_TIMEOUT=50 SAN_ARGS="--kernel-name kns=fwd_kernel --launch-count 1" san racecheck 64 --batch 1 --heads 4 --seqlen 4100 --fwd-workspace yes > $O/r/sanitizer.txt
V=mf64 SAN_TIMEOUT=50 san memcheck 64 --batch 1 --heads 4 --seqlen 4100 --fwd-workspace no >> $O/r/sanitizer.txt
tally $O/r/sanitizer.txt
pack && rm -rf $O/r
echo "all done at $SECONDS s"
