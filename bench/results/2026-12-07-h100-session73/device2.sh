#!/usr/bin/env bash
# Session 73, call 2 (right after call 1, same carried build/vbin.tar.xz): eq / base at the power cap
# beside cuDNN (ab_steady, 2000 launches per phase, 2 rounds) on d 128's rows the release reaches
# (the persistent kernel up to 1k keys, the dynamic one from 2k), bf16, then fp16 at 512.
source bench/device_lib.sh
call_setup
bins base eq > $O/r/bins.txt
DEADLINE=${CALL_DEADLINE:-560}
export STEADY_DEADLINE=$(( DEADLINE - 60 )) STEADY_TIMEOUT=$(left 300)
steady_part steady-eq base,eq 2000 bf16 2 128:no:512 128:yes:512 128:no:1024 128:yes:1024 128:no:2048 128:yes:2048
pack
export STEADY_TIMEOUT=$(left 150)
steady_part steady-eq-fp16 base,eq 2000 fp16 2 128:no:512 128:yes:512 128:no:2048
pack && rm -rf $O/r
echo "all done at $SECONDS s"
