#!/usr/bin/env bash
# Session 29, call 3 (same machine and build tree as call 2): scripts/gpu-check's GPU tests, then the
# forward grid at d 128 (bench.py, bf16 + fp16, SM90 beside cuDNN, FA2 and FlexAttention, 2 rounds)
# on gpu-check's build (its Python module).
OUT=$OUT FLASHCUTE_STEPS="tests" FLASHCUTE_TEST_RUNNER=gtest FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a" \
  timeout 300 scripts/gpu-check > $OUT/gpu-check-console-tests.txt 2>&1
echo "gpu-check rc=$?"; tail -12 $OUT/gpu-check-console-tests.txt
O=$OUT; mkdir -p $O/g; t0=$SECONDS
for d in ${GRID_DIMS:-128}; do
  PYTHONPATH=build/gpu/python timeout 250 python3 bench/bench.py --pass fwd --dtype bf16,fp16 --d $d \
    --impl flashcute_sm90,sdpa_cudnn,sdpa_flash,flex --flex-warm-procs 12 --rounds 2 --max-seconds 95 \
    --out $O/g/fwd-grid-d$d-${RUN:-run1} > $O/g/grid-d$d-${RUN:-run1}.log 2>&1
  echo "grid d $d rc=$? ($((SECONDS - t0)) s)"; tail -2 $O/g/grid-d$d-${RUN:-run1}.log
done
tar czf $O/grids.tgz -C $O g && rm -rf $O/g
