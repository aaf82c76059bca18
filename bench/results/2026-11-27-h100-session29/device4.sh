#!/usr/bin/env bash
# Session 29, call 4 (same machine and build tree as calls 2-3): forward grids (bench.py, bf16 + fp16,
# SM90 beside cuDNN, FA2 and FlexAttention, 2 rounds) on gpu-check's build: d 128 again, d 64, d 256.
O=$OUT; mkdir -p $O/g; t0=$SECONDS
for spec in ${GRID_SPECS:-128:run2 64:run1 256:run1}; do d=${spec%%:*}; run=${spec##*:}
  PYTHONPATH=build/gpu/python timeout 170 python3 bench/bench.py --pass fwd --dtype bf16,fp16 --d $d \
    --impl flashcute_sm90,sdpa_cudnn,sdpa_flash,flex --flex-warm-procs 12 --rounds 2 --max-seconds 95 \
    --out $O/g/fwd-grid-d$d-$run > $O/g/grid-d$d-$run.log 2>&1
  echo "grid d $d $run rc=$? ($((SECONDS - t0)) s)"; tail -2 $O/g/grid-d$d-$run.log
done
tar czf $O/grids.tgz -C $O g && rm -rf $O/g
