#!/usr/bin/env bash
# Session 28, calls 8-9: more forward grid runs on dc7d240 (bf16 + fp16, SM90 beside cuDNN, FA2 and
# FlexAttention, 2 rounds each), d 128 (RUN=run3 / run4), d 64 and d 256 (RUN2=run1 / run2), from
# the gpu preset's sm_90a build (its objects from call 4's gpu-check; only relinked here).
O=${OUT:-gpu-out}; mkdir -p $O
scripts/setup > /dev/null 2>&1; eval "$(scripts/setup --env)"
t0=$SECONDS
cmake --preset gpu -DFLASHCUTE_ARCHS=90a "-DFLASHCUTE_HEAD_DIMS=64;128;256" -DFLASHCUTE_BUILD_TESTS=OFF > $O/grid-build.log 2>&1 &&
  cmake --build --preset gpu -j $(nproc) >> $O/grid-build.log 2>&1
echo "build rc=$? ($((SECONDS - t0)) s)"
for d in 128 64 256; do
  r=${RUN2:-run1}; [ $d = 128 ] && r=${RUN:-run3}
  PYTHONPATH=build/gpu/python timeout 200 python3 bench/bench.py --pass fwd --dtype bf16,fp16 --d $d \
    --impl flashcute_sm90,sdpa_cudnn,sdpa_flash,flex --flex-warm-procs 12 --rounds 2 --max-seconds 95 \
    --out $O/g/fwd-grid-d$d-$r > $O/grid-d$d.log 2>&1
  echo "grid d $d rc=$? ($((SECONDS - t0)) s)"; tail -1 $O/grid-d$d.log
done
tar czf $O/grids.tgz -C $O/g . && rm -rf $O/g
