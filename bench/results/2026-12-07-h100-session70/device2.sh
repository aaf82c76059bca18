#!/usr/bin/env bash
# Session 70, call 2: call 1's locked-clock grid again (bf16 and fp16 at ncu's base clock), with 5 calls
# per kernel instead of 3, on the same (warm) machine: how far the locked-clock ratios move from one run to the
# next. Same module build as call 1 (build/lib90.tar.xz); no pytest.
source bench/device_lib.sh
call_setup
DEADLINE=${DEADLINE:-400}
prebuilt_module
G="--backend sm90 --peer sdpa_cudnn --d 64,128,256 --seqlen 512,1024,2048,4096,8192,16384 --calls 5"
for dt in bf16 fp16; do
  t1=$SECONDS
  timeout $(left 200) python3 bench/ncu_pairs.py $G --dtype $dt --clock base --records "$O/r/ncu-$dt-base.json" \
    > "$O/r/ncu-$dt-base.md" 2> "$O/r/ncu-$dt-base.err"
  echo "ncu $dt base rc=$? ($((SECONDS - t1)) s)"; tail -n 5 "$O/r/ncu-$dt-base.err"
done
pack
echo "all done at $SECONDS s"
