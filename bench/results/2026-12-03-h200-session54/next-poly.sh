#!/usr/bin/env bash
# NOT RUN (written in session 54 for a next session's call): d 64's masked kernel with every 4th / 8th
# exp2 on the FMA pipe (exp2_fma<3>). p4 / p8: bf16 d 64 CLI builds with
# -DFLASHCUTE_SM90_FWD_D64_POLY_EVERY=4 / 8 (FLASHCUTE_SM90_FLAGS); main64: the same build of main.
# On the CPU machine (session 54) both spilled in the masked kernel only, on rare paths (p4 16 bytes,
# p8 72 / 52: the sum check's unfused exp form and the slow path's update), none in the fast path.
# fp64 checks first, packed; then ab_steady with cuDNN at causal 4k / 8k / 16k.
source bench/device_lib.sh
call_setup
bins main64 p4 p8 > $O/r/bins.txt
for V in p4 p8; do chk_masked64 > $O/r/checks-$V.txt; chk_std 64 >> $O/r/checks-$V.txt; tally $O/r/checks-$V.txt; done
pack
steady_part ab64-bf16-c8k main64,p4 300 bf16 3 64:yes:8192
steady_part ab64-bf16-c8k-p8 main64,p8 300 bf16 3 64:yes:8192
pack
steady_part ab64-bf16-c4k main64,p4 600 bf16 3 64:yes:4096
steady_part ab64-bf16-c16k main64,p4 150 bf16 3 64:yes:16384
pack && rm -rf $O/r
