#!/usr/bin/env bash
# Session 68, not run (six failed machine starts between 01:44 and 02:35 UTC; session 67's device1.sh): the Python module of this tree (sm_90a, bf16 + fp16, d 64 / 128 / 256; no tests)
# built on the machine's 16 cores, then scripts/gpu-grid at d 128 and d 64 (bench.py: ours beside
# SDPA's cuDNN and FlashAttention-2 backends and FlexAttention, bf16 and fp16, 2 rounds). The module
# comes back (py.tar.xz) so that later calls carry it instead of building again.
source bench/device_lib.sh
call_setup
export CUTLASS_DIR=$PWD/.deps/clp
t0=$SECONDS
cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLASHCUTE_ARCHS=90a "-DFLASHCUTE_HEAD_DIMS=64;128;256" \
  -DFLASHCUTE_BUILD_TESTS=OFF -DFLASHCUTE_BUILD_APPS=OFF -DFLASHCUTE_BUILD_PYTHON=ON -DFLASHCUTE_PTXAS_VERBOSE=ON > $O/r/build.log 2>&1 \
  && timeout 300 cmake --build build/gpu --target flashcute_ext -j16 >> $O/r/build.log 2>&1
echo "build rc=$? ($((SECONDS - t0)) s)"
grep -c 'Used [0-9]* registers' $O/r/build.log; grep -c 'bytes spill stores' $O/r/build.log
grep 'spill stores' $O/r/build.log | grep -v ' 0 bytes spill stores' | head -5
grep -n 'C75[0-9][0-9]' $O/r/build.log | head -5
gzip -9 $O/r/build.log
tar cJf $O/py.tar.xz -C build/gpu python && ls -la $O/py.tar.xz
OUT=$O/r GRID_SPECS="128:h100 64:h100" GRID_TIMEOUT=150 timeout $((575 - SECONDS)) scripts/gpu-grid 2>&1 | tail -n 12
pack
echo "all done at $SECONDS s"
