#!/usr/bin/env bash
# Session 71, call 3: where the rows stand against the tensor pipe: ncu_pairs --pipe (main's kernels,
# the prebuilt module on build/lib90.tar.xz, beside cuDNN), bf16, every row of issue 7's grid at the
# locked clock: each implementation's tensor-pipe active share of the SMs' active cycles and the SMs'
# active share of the elapsed cycles.
source bench/device_lib.sh
call_setup
prebuilt_module; echo "module rc=$? at $SECONDS s"
for dt in bf16 fp16; do
  timeout $(left 240) python3 bench/ncu_pairs.py --backend sm90 --peer sdpa_cudnn --dtype $dt --pipe --d 64,128,256 \
    --seqlen 512,1024,2048,4096,8192,16384 --records $O/r/ncu-pipe-$dt.json > $O/r/ncu-pipe-$dt.md 2> $O/r/ncu-pipe-$dt.err
  echo "ncu-pipe-$dt rc=$? at $SECONDS s"; tail -40 $O/r/ncu-pipe-$dt.md
  pack
done
rm -rf $O/r
