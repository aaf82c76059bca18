#!/usr/bin/env bash
# Session 75, call 3 (short): d 128 non-causal 2k, the two rows session 74 read met on the median of
# two rounds with one round below the target (bf16 1.107: 1.075 / 1.139; fp16 1.099: 1.069 / 1.129).
# Three more rounds of main's kernel (the d128 CLI: session 74's eqs build, fp16 + bf16 d 128; no kernel
# has changed on main since) beside cuDNN, each dtype. The standing takes each row's latest
# measurement, so this reading replaces session 74's whichever way it goes.
source bench/device_lib.sh
call_setup
bins d128 > $O/r/bins.txt
export DEADLINE=${CALL_DEADLINE:-300} STEADY_DEADLINE=250 STEADY_TIMEOUT=110
steady_part steady-d128-2k-bf16 d128 1250 bf16 3 128:no:2048
pack
steady_part steady-d128-2k-fp16 d128 1250 fp16 3 128:no:2048
pack && rm -rf $O/r
echo "all done at $SECONDS s"
