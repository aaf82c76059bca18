#!/usr/bin/env bash
# Session 75, call 4 (NOT RUN; for a session with device time to spare): the GPU tests of main at every
# head-dim bucket (64 / 96 / 128 / 192 / 256), fp16 + bf16, sm_90a, default flags. The last full-bucket
# run was session 65's (a729185); session 74 changed d 128's kernel up to 2k keys and ran the d 128
# tests only. Carried: build/tests-all.tar.xz (a tar of build/gpu-all/tests/gpu_test_*, xz; configure:
# -DFLASHCUTE_ARCHS=90a "-DFLASHCUTE_DTYPES=fp16;bf16" -DFLASHCUTE_BUILD_TESTS=ON, every head dim) and
# build/lib90.tar.xz (libflashcute.a of main for the package's pytest suite; prebuilt_module).
# The grids' fp64 references are CPU-bound: the two grids in 6 shards each, the edge cases in 3, on the
# machine's 16 cores, beside the pytest suite.
source bench/device_lib.sh
call_setup
export DEADLINE=${CALL_DEADLINE:-560} GTEST_TIMEOUT=500
TESTS_TAR=build/tests-all.tar.xz gtest_carried gpu_test_fwd_grid:6 gpu_test_bwd_grid:4 gpu_test_fwd_edge:3 &
tests_pid=$!
( prebuilt_module > $O/r/module.txt 2>&1 && python3 -c 'import flashcute._C as C; print(C.build_config())' >> $O/r/module.txt 2>&1
  timeout $(left 400) python3 -m pytest -q -rs tests/python > $O/r/pytest.txt 2>&1; echo "pytest rc=$?" >> $O/r/module.txt ) &
py_pid=$!
wait $tests_pid $py_pid
cat $O/r/module.txt; tail -n 4 $O/r/pytest.txt
tally $O/r/gtest.txt | tee $O/r/tally.txt
cat $O/r/gtest.txt
pack && rm -rf $O/r
echo "all done at $SECONDS s"
