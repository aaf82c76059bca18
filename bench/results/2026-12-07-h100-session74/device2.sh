#!/usr/bin/env bash
# Session 74, call 2: the package's pytest suite on the GPU for this tree's default (d 128's early Q
# release up to 2k keys). The Python module is linked on build/lib90.tar.xz (libflashcute.a built on
# the CPU machine from this tree: sm_90a, bf16 + fp16, d 64 / 128 / 256; the other buckets skip by name).
source bench/device_lib.sh
call_setup
export DEADLINE=${CALL_DEADLINE:-280}
prebuilt_module
python3 -c 'import flashcute._C as C; print(C.build_config())' 2>&1 | tee "$O/r/build_config.txt"
t1=$SECONDS
timeout $(left 240) python3 -m pytest -q -rs tests/python > "$O/r/pytest.txt" 2>&1
echo "pytest rc=$? ($((SECONDS - t1)) s)"; tail -n 8 "$O/r/pytest.txt"
pack && rm -rf $O/r
echo "all done at $SECONDS s"
