#!/bin/sh
# CTest cpu.python.prebuilt_library: the Python module built on a prebuilt libflashcute.a
# (-DFLASHCUTE_PREBUILT_LIBRARY, CMakeLists.txt) compiles no kernel, links, imports, and reports the
# same build_config() as the module of the build it came from.
#
#   prebuilt_test.sh SOURCE_DIR WORK_DIR LIBRARY PYTHON MAIN_MODULE_DIR CUDA_COMPILER GENERATOR
set -eu
src=$1 work=$2 lib=$3 py=$4 main_py=$5 nvcc=$6 gen=$7
rm -rf "$work"
cmake -S "$src" -B "$work" -G "$gen" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$nvcc" \
  -DPython_EXECUTABLE="$py" -DFLASHCUTE_PREBUILT_LIBRARY="$lib" \
  -DFLASHCUTE_BUILD_PYTHON=ON -DFLASHCUTE_BUILD_TESTS=OFF -DFLASHCUTE_BUILD_APPS=OFF >"$work.log" 2>&1 ||
  { cat "$work.log"; echo "FAIL: configure"; exit 1; }
cmake --build "$work" --target flashcute_ext >>"$work.log" 2>&1 || { tail -n 40 "$work.log"; echo "FAIL: build"; exit 1; }
if grep -q '\.cu\.o' "$work.log"; then echo "FAIL: the prebuilt build compiled CUDA sources"; exit 1; fi
ours=$(PYTHONPATH="$work/python" "$py" -c 'import flashcute._C as C; print(C.build_config())')
theirs=$(PYTHONPATH="$main_py" "$py" -c 'import flashcute._C as C; print(C.build_config())')
echo "prebuilt: $ours"
echo "main:     $theirs"
[ -n "$ours" ] && [ "$ours" = "$theirs" ] || { echo "FAIL: build_config differs"; exit 1; }
echo "PASS"
