#!/usr/bin/env bash
# Session 69, call 1: the Python module of this tree linked on the library built on the CPU machine
# (-DFLASHCUTE_PREBUILT_LIBRARY; build/lib90.tar.xz holds libflashcute.a: sm_90a, bf16 + fp16,
# d 64 / 128 / 256), so that no kernel compiles here; then scripts/gpu-grid at d 128, 64 and 256
# (bench.py: ours beside SDPA's cuDNN and FlashAttention-2 backends and FlexAttention, bf16 and
# fp16, 2 rounds, BENCHMARKING.md's grid). The module comes back (py.tar.xz) for later calls.
# DEADLINE: seconds after which the grid is cut, so that pack still runs (the device time left shrank
# with each failed machine start).
source bench/device_lib.sh
call_setup
t0=$SECONDS
mkdir -p build/prebuilt && tar xJf build/lib90.tar.xz -C build/prebuilt
cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLASHCUTE_PREBUILT_LIBRARY="$PWD/build/prebuilt/libflashcute.a" \
  -DFLASHCUTE_BUILD_PYTHON=ON -DFLASHCUTE_BUILD_TESTS=OFF -DFLASHCUTE_BUILD_APPS=OFF > "$O/r/build.log" 2>&1 \
  && cmake --build build/gpu --target flashcute_ext -j16 >> "$O/r/build.log" 2>&1
echo "build rc=$? ($((SECONDS - t0)) s)"
PYTHONPATH=build/gpu/python python3 -c 'import flashcute._C as C; print(C.build_config())' 2>&1 | tee "$O/r/build_config.txt"
tar cJf "$O/py.tar.xz" -C build/gpu python && ls -la "$O/py.tar.xz"
OUT=$O/r GRID_SPECS="${GRID_SPECS:-128:run1 64:run1 256:run1}" GRID_TIMEOUT=170 timeout $((${DEADLINE:-590} - SECONDS)) scripts/gpu-grid 2>&1 | tail -n 12
pack
echo "all done at $SECONDS s"
