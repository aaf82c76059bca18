#!/usr/bin/env bash
# Session 70, call 2: call 1's locked-clock grid again (bf16 and fp16 at ncu's base clock), with 5 calls
# per kernel instead of 3, on the same (warm) machine: how far the locked-clock ratios move from one run to the
# next. Same module build as call 1 (build/lib90.tar.xz); no pytest.
source bench/device_lib.sh
call_setup
left() { local l=$(( ${DEADLINE:-400} - SECONDS )); (( l > $1 )) && l=$1; (( l < 1 )) && l=1; echo $l; }
t0=$SECONDS
mkdir -p build/prebuilt && tar xJf build/lib90.tar.xz -C build/prebuilt
cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLASHCUTE_PREBUILT_LIBRARY="$PWD/build/prebuilt/libflashcute.a" \
  -DFLASHCUTE_BUILD_PYTHON=ON -DFLASHCUTE_BUILD_TESTS=OFF -DFLASHCUTE_BUILD_APPS=OFF > "$O/r/build.log" 2>&1 \
  && cmake --build build/gpu --target flashcute_ext -j16 >> "$O/r/build.log" 2>&1
echo "build rc=$? ($((SECONDS - t0)) s)"
export PYTHONPATH=$PWD/build/gpu/python
G="--backend sm90 --peer sdpa_cudnn --d 64,128,256 --seqlen 512,1024,2048,4096,8192,16384 --calls 5"
for dt in bf16 fp16; do
  t1=$SECONDS
  timeout $(left 200) python3 bench/ncu_pairs.py $G --dtype $dt --clock base --records "$O/r/ncu-$dt-base.json" \
    > "$O/r/ncu-$dt-base.md" 2> "$O/r/ncu-$dt-base.err"
  echo "ncu $dt base rc=$? ($((SECONDS - t1)) s)"; tail -n 5 "$O/r/ncu-$dt-base.err"
done
pack
echo "all done at $SECONDS s"
