#!/usr/bin/env bash
# Session 68, not run (too little device time left; session 67's device1.sh cut to d 128): the Python module of this tree
# (sm_90a, bf16 + fp16, d 128 only; no tests) built on the machine's 16 cores, then scripts/gpu-grid
# at d 128 (bench.py: ours beside SDPA's cuDNN and FlashAttention-2 backends and FlexAttention, bf16
# and fp16, 2 rounds).
source bench/device_lib.sh
call_setup
export CUTLASS_DIR=$PWD/.deps/clp
t0=$SECONDS
cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLASHCUTE_ARCHS=90a -DFLASHCUTE_HEAD_DIMS=128 \
  -DFLASHCUTE_BUILD_TESTS=OFF -DFLASHCUTE_BUILD_APPS=OFF -DFLASHCUTE_BUILD_PYTHON=ON -DFLASHCUTE_PTXAS_VERBOSE=ON > $O/r/build.log 2>&1 \
  && timeout 240 cmake --build build/gpu --target flashcute_ext -j16 >> $O/r/build.log 2>&1
echo "build rc=$? ($((SECONDS - t0)) s); ptxas reports: $(grep -c 'spill stores' $O/r/build.log), with spills: $(grep 'spill stores' $O/r/build.log | grep -vc ' 0 bytes spill stores')"
gzip -9 $O/r/build.log
OUT=$O/r GRID_SPECS="128:h100" GRID_TIMEOUT=170 timeout $((480 - SECONDS)) scripts/gpu-grid 2>&1 | tail -n 6
pack
echo "all done at $SECONDS s"
