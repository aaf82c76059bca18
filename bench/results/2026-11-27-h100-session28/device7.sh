#!/usr/bin/env bash
# Session 28, call 6: the forward grid at d 128 (bf16 + fp16, SM90 beside cuDNN, FA2 and FlexAttention,
# 2 rounds) on dc7d240 (the opaque recompute coordinates), from a d 128 sm_90a build of the gpu preset (Python
# module included).
O=${OUT:-gpu-out}; mkdir -p $O
scripts/setup > /dev/null 2>&1; eval "$(scripts/setup --env)"
t0=$SECONDS
cmake --preset gpu -DFLASHCUTE_ARCHS=90a "-DFLASHCUTE_HEAD_DIMS=128" -DFLASHCUTE_BUILD_TESTS=OFF > $O/grid-build.log 2>&1 &&
  cmake --build --preset gpu -j $(nproc) >> $O/grid-build.log 2>&1
echo "build rc=$? ($((SECONDS - t0)) s)"
for d in 128; do
  PYTHONPATH=build/gpu/python timeout 300 python3 bench/bench.py --pass fwd --dtype bf16,fp16 --d $d \
    --impl flashcute_sm90,sdpa_cudnn,sdpa_flash,flex --flex-warm-procs 12 --rounds 2 --max-seconds 95 \
    --out $O/fwd-grid-d$d-${RUN:-run1} > $O/grid-d$d.log 2>&1
  echo "grid d $d rc=$? ($((SECONDS - t0)) s)"; tail -2 $O/grid-d$d.log
done
tar czf $O/grids.tgz -C $O fwd-grid-d128-${RUN:-run1} 2>/dev/null; rm -rf $O/fwd-grid-d128-${RUN:-run1}
