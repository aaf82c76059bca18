#!/usr/bin/env bash
# Session 73, call 3 (warm, after call 2): eq / base at the power cap beside cuDNN on d 128's 4k / 8k
# rows, where the locked clock read 0.992-0.999 (ab_steady, 1000 launches per phase, 2 rounds, bf16).
source bench/device_lib.sh
call_setup
bins base eq > $O/r/bins.txt
DEADLINE=${CALL_DEADLINE:-300}
export STEADY_DEADLINE=$(( DEADLINE - 40 )) STEADY_TIMEOUT=$(left 250)
steady_part steady-eq-long base,eq 1000 bf16 2 128:yes:4096 128:no:4096 128:yes:8192 128:no:8192
pack && rm -rf $O/r
echo "all done at $SECONDS s"
