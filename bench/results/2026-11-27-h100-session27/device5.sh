#!/usr/bin/env bash
# Session 27, call 5: a second d 128 grid and a d 256 grid (bench.py, bf16 + fp16, SM90 beside cuDNN,
# FA2 and FlexAttention, 2 rounds) on the tree that lands the sum check, from a d 128/256 sm_90a build
# of the gpu preset; then the ncu source page of the landed d 128 kernel (`land27` CLI build, bf16
# non-causal 8k, one launch).
O=${OUT:-gpu-out}; mkdir -p $O
scripts/setup > /dev/null 2>&1; eval "$(scripts/setup --env)"
t0=$SECONDS
cmake --preset gpu -DFLASHCUTE_ARCHS=90a "-DFLASHCUTE_HEAD_DIMS=128;256" -DFLASHCUTE_BUILD_TESTS=OFF > $O/grid-build.log 2>&1 &&
  cmake --build --preset gpu -j $(nproc) >> $O/grid-build.log 2>&1
echo "build rc=$? ($((SECONDS - t0)) s)"
for d in 256 128; do
  PYTHONPATH=build/gpu/python timeout 150 python3 bench/bench.py --pass fwd --dtype bf16,fp16 --d $d \
    --impl flashcute_sm90,sdpa_cudnn,sdpa_flash,flex --flex-warm-procs 12 --rounds 2 --max-seconds 95 \
    --out $O/fwd-grid-d$d-run2 > $O/grid-d$d.log 2>&1
  echo "grid d $d rc=$? ($((SECONDS - t0)) s)"; tail -2 $O/grid-d$d.log
done
(cd $O && tar czf grids.tgz fwd-grid-d256-run2 fwd-grid-d128-run2 && rm -rf fwd-grid-d256-run2 fwd-grid-d128-run2)
timeout 80 ncu --kernel-name regex:fwd_kernel --launch-skip 1 --launch-count 1 --section SourceCounters --section WarpStateStats --section SpeedOfLight \
  --page source --print-source sass --csv build/land27/apps/flashcute bench --dtype bf16 --d 128 --seqlen 8192 --causal false --pass fwd \
  --backend sm90 --warmup 1 --iters 1 --no-flush > $O/ncu-src-sum-d128-8192.csv 2> $O/ncu-src.err
echo "ncu rc=$? $(wc -c < $O/ncu-src-sum-d128-8192.csv) bytes ($((SECONDS - t0)) s)"; tail -2 $O/ncu-src.err
(cd $O && tar czf ncu-src.tgz ncu-src-sum-d128-8192.csv && rm -f ncu-src-sum-d128-8192.csv)
