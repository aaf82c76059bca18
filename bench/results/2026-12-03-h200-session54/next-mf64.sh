#!/usr/bin/env bash
# NOT RUN (written in session 54 for the next session's call): d 64's long unmasked rows on the masked
# kernel. mf64: a bf16 d 64 CLI build with -DFLASHCUTE_SM90_FWD_MASKED_FULL_MIN_SEQLEN_K=4096
# (cmake -DFLASHCUTE_DTYPES=bf16 -DFLASHCUTE_HEAD_DIMS=64 -DFLASHCUTE_SM90_FLAGS=..., target flashcute_cli); main64: the same
# build of main (the switch off). fp64 checks first, packed; then ab_steady with cuDNN at non-causal
# 4k / 8k / 16k (main64's kernels run those rows on the overlapped loop).
source bench/device_lib.sh
call_setup
bins main64 mf64 > $O/r/bins.txt
V=mf64; chk_full64 > $O/r/checks-$V.txt; chk_std 64 >> $O/r/checks-$V.txt; tally $O/r/checks-$V.txt
for tool in racecheck synccheck memcheck; do
  SAN_TIMEOUT=120 san $tool 64 --batch 1 --heads 4 --seqlen 4100 --fwd-workspace yes >> $O/r/sanitizer-$V.txt
done
tally $O/r/sanitizer-$V.txt
pack
steady_part ab64-bf16-nc8k main64,mf64 300 bf16 3 64:no:8192
pack
steady_part ab64-bf16-nc4k main64,mf64 600 bf16 3 64:no:4096
pack
steady_part ab64-bf16-nc16k main64,mf64 150 bf16 3 64:no:16384
pack && rm -rf $O/r
