#!/usr/bin/env bash
# Session 65, call 2: scripts/gpu-check of this tree (FLASHCUTE_SM90_FWD_MASKED_FULL_MIN_SEQLEN_K
# default 4096, the new grid / FwdWorkspace cases): the full SM90 build, every GPU test (gtest) and
# pytest. Nothing else in this call. CUTLASS from .deps/clp/include (the wheel's cute/ and cutlass/
# headers the build includes, made on the CPU machine as scripts/carry-headers now does: the whole
# set put the call over 64 MiB).
export CUTLASS_DIR=$PWD/.deps/clp
O=${OUT:-gpu-out}; mkdir -p $O/r/gc
OUT=$O/r/gc FLASHCUTE_STEPS="build tests pytest" FLASHCUTE_TEST_RUNNER=gtest FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a" \
  scripts/gpu-check > $O/r/gpucheck.log 2>&1
echo "gpu-check rc=$? at $SECONDS s"
tail -25 $O/r/gpucheck.log
rm -f $O/r/gc/build.log.gz
source bench/device_lib.sh
pack && rm -rf $O/r
