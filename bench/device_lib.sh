# Helpers for device-call scripts (sourced, not run): compute-sanitizer runs and fp64 checks of a
# prebuilt `flashcute` CLI, so that each session's call script holds only what that call runs.
#
#   source bench/device_lib.sh
#   call_setup                         # O, $O/r, build/vbin.tar.xz unpacked, B=build/vbin, gpu.txt
#   B=build/abXX; V=variant            # binaries: $B/<variant>/flashcute
#   bins base $V > $O/bins.txt         # hashes; writes each variant's args file (a zeroed workspace)
#   san synccheck 128 --batch 4 --heads 32 --seqlen 1000 --fwd-workspace yes >> $O/sanitizer.txt
#   chk_std 128 >> $O/checks.txt       # the standard fp64 checks of one head dim (d 64, 128 or 256)
#   chk_masked64 >> $O/checks.txt      # d 64's masked-kernel list; chk_full64 its long unmasked one;
#                                      # chk_clusters256 d 256's unmasked shapes from 512 keys
#   chk 128 "--seqlen 777 --causal" ... # any other checks, one argument string each
#   steady_part ab64-c2k base,$V 1200 bf16 3 64:yes:2048 # ab_steady of $V against base and cuDNN
#   gtest_carried gpu_test_fwd_grid:6 gpu_test_fwd_edge:3 &  # carried GPU tests (build/tests.tar.xz), sharded
#   gpu_check                          # scripts/gpu-check (sm_90a build, GPU tests, pytest) into $O/r/gc
#   prebuilt_module                    # the Python module on the carried build/lib90.tar.xz; PYTHONPATH
#   timeout $(left 200) CMD            # at most 200 s, and never past ${DEADLINE:-580} s into the call
#   pack                               # $O/r with paths rewritten, into $O/r.tgz
#
# Every line starts with rc=<exit status>; a check passes when rc=0 (`flashcute run` exits non-zero
# when the kernel's output fails the fp64 reference's tolerance rule).

# call_setup: a call script's preamble: O (from $OUT, else gpu-out) with its r/ folder, the carried
# build/vbin.tar.xz unpacked (when there is one), B=build/vbin, and the GPU's name, clock and power
# limit in $O/r/gpu.txt.
call_setup() {
  O=${OUT:-gpu-out}
  mkdir -p "$O/r"
  [ -f build/vbin.tar.xz ] && tar xJf build/vbin.tar.xz -C build
  B=build/vbin
  nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > "$O/r/gpu.txt" 2>&1 || true
}

# bins VARIANT...: each binary's hash; writes $B/<variant>/args ("--fwd-workspace zeroed", what
# bench/ab_steady.py passes to every run of the variant).
bins() {
  local v
  for v in "$@"; do
    echo "--fwd-workspace zeroed" > "$B/$v/args"
    echo "$v $(sha1sum < "$B/$v/flashcute" | cut -c1-12)"
  done
}

# san TOOL D ARGS...: one compute-sanitizer run of variant $V (${DTYPE:-bf16}, 2 heads checked against fp64);
# SAN_ARGS, sanitizer options before the program (e.g. "--kernel-name kns=fwd_kernel --launch-count 1":
# the forward kernel's first launch only, session 54's form for runs that instrument slowly).
san() {
  local tool=$1 d=$2
  shift 2
  local t=$SECONDS
  # shellcheck disable=SC2086  # SAN_ARGS is a list of sanitizer options
  timeout "${SAN_TIMEOUT:-60}" compute-sanitizer --tool "$tool" --error-exitcode 1 ${SAN_ARGS:-} "$B/$V/flashcute" run --backend sm90 \
    --dtype "${DTYPE:-bf16}" --d "$d" --iters 1 --check-heads 2 "$@" > san.txt 2>&1
  echo "rc=$? $((SECONDS - t))s $V $tool${SAN_ARGS:+ [$SAN_ARGS]} d$d $* :: $(grep -E 'SUMMARY|max\|out' san.txt | tr '\n' ' ' | cut -c1-200)"
}

# chk D ARGS...: fp64 checks of variant $V (${DTYPE:-bf16}, batch 2, 16 heads unless ARGS say otherwise;
# each run cut at ${CHK_TIMEOUT:-60} s).
chk() {
  local d=$1 args out
  shift
  for args in "$@"; do
    # shellcheck disable=SC2086  # each ARGS string is a list of CLI options
    out=$(timeout "${CHK_TIMEOUT:-60}" "$B/$V/flashcute" run --backend sm90 --dtype "${DTYPE:-bf16}" --d "$d" --batch 2 --heads 16 --check-heads 4 \
      --iters 2 $args 2>&1)
    echo "rc=$? d$d $args :: $(echo "$out" | grep -i -E 'max|err|check' | tr '\n' ' ' | cut -c1-200)"
  done
}

# chk_std D: the standard checks (sessions 37-38's lists): lengths around the persistent, dynamic
# and masked limits, partial tiles, tiles without keys, GQA/MQA, windows, softcap, one query.
chk_std() {
  case $1 in
    128)
      chk 128 "--seqlen 512 --fwd-workspace yes" "--seqlen 700 --causal --fwd-workspace yes" \
        "--seqlen 1000 --fwd-workspace no" "--seqlen 1000 --causal --fwd-workspace no" "--seqlen 130 --fwd-workspace yes" \
        "--seqlen 100 --fwd-workspace no" "--seqlen 3000 --causal --fwd-workspace yes" "--seqlen 4000 --fwd-workspace yes" \
        "--seqlen 5000" "--seqlen 6000 --causal" "--seqlen-q 300 --seqlen-k 1000 --causal --fwd-workspace yes" \
        "--seqlen-q 1000 --seqlen-k 400 --causal --fwd-workspace yes" "--seqlen-q 1000 --seqlen-k 400 --causal --fwd-workspace no" \
        "--seqlen-q 900 --seqlen-k 130 --causal --fwd-workspace no" "--seqlen 1024 --heads-kv 4 --fwd-workspace yes" \
        "--seqlen 1024 --heads-kv 1 --fwd-workspace no" "--seqlen 800 --window-left 100 --window-right 50 --fwd-workspace yes" \
        "--seqlen 900 --window-left 64 --window-right 0 --fwd-workspace no" "--seqlen 800 --softcap 30 --fwd-workspace yes" \
        "--seqlen-q 1 --seqlen-k 1000 --fwd-workspace yes" "--seqlen 2000 --batch 3 --heads 5 --fwd-workspace no"
      ;;
    64)
      chk 64 "--seqlen 2000 --fwd-workspace yes" "--seqlen 1900 --fwd-workspace yes" "--seqlen 2048 --fwd-workspace no" \
        "--seqlen 1000 --fwd-workspace no" "--seqlen 5000" "--seqlen 190 --fwd-workspace yes" \
        "--seqlen-q 2000 --seqlen-k 400 --fwd-workspace yes" "--seqlen-q 1000 --seqlen-k 400 --causal --fwd-workspace no" \
        "--seqlen 2000 --heads-kv 2 --fwd-workspace yes" "--seqlen 512 --causal --fwd-workspace yes" \
        "--seqlen 700 --causal --fwd-workspace yes" "--seqlen 1000 --causal --fwd-workspace no" \
        "--seqlen 500 --fwd-workspace yes" "--seqlen 3000 --causal"
      ;;
    256)
      # d 256's masked short tiles and their limits (sessions 47-48's list).
      chk 256 "--seqlen 512 --causal --fwd-workspace yes" "--seqlen 700 --causal --fwd-workspace yes" \
        "--seqlen 1000 --causal --fwd-workspace no" "--seqlen 2000 --causal --fwd-workspace yes" \
        "--seqlen 4000 --causal --fwd-workspace yes" "--seqlen 257 --causal --fwd-workspace no" \
        "--seqlen 512 --fwd-workspace yes" "--seqlen 1000 --fwd-workspace no" "--seqlen 2048 --fwd-workspace yes" \
        "--seqlen-q 64 --seqlen-k 1000 --causal --fwd-workspace yes" "--seqlen-q 1000 --seqlen-k 300 --causal --fwd-workspace yes" \
        "--seqlen-q 300 --seqlen-k 1000 --causal --fwd-workspace no" "--seqlen-q 1000 --seqlen-k 100 --causal --fwd-workspace yes" \
        "--seqlen 800 --window-left 100 --window-right 50 --fwd-workspace yes" \
        "--seqlen 900 --window-left 64 --window-right 0 --fwd-workspace no" "--seqlen 1000 --causal --heads-kv 1 --fwd-workspace yes" \
        "--seqlen 900 --causal --batch 3 --heads 5 --fwd-workspace yes" "--seqlen 512 --causal --scale 30 --fwd-workspace yes" \
        "--seqlen 1 --causal --fwd-workspace yes" "--seqlen 800 --causal --softcap 30 --fwd-workspace yes"
      ;;
    *) echo "chk_std: no standard list for d $1" >&2; return 1 ;;
  esac
}

# chk_masked64: d 64's masked-kernel checks (sessions 53-54's list, 20): causal 2k-8k with ragged and
# unequal lengths, rows with no visible key, windows, MQA, huge logits (--scale 30 / 300 / 50).
chk_masked64() {
  chk 64 "--seqlen 2048 --causal --fwd-workspace yes" "--seqlen 4096 --causal --fwd-workspace no" \
    "--seqlen-q 4100 --seqlen-k 3000 --causal --fwd-workspace yes" "--seqlen-q 2048 --seqlen-k 4000 --causal --fwd-workspace yes" \
    "--seqlen 2900 --window-left 300 --window-right 100 --fwd-workspace yes" "--seqlen 4096 --causal --heads-kv 1 --fwd-workspace yes" \
    "--seqlen-q 2000 --seqlen-k 2048 --causal --fwd-workspace yes" "--seqlen-q 1984 --seqlen-k 2048 --causal --fwd-workspace no" \
    "--seqlen-q 3000 --seqlen-k 3100 --causal --fwd-workspace yes" "--seqlen-q 3052 --seqlen-k 3000 --causal --fwd-workspace no" \
    "--seqlen 2048 --causal --window-left 100 --fwd-workspace yes" "--seqlen 3000 --causal --window-left 150 --fwd-workspace no" \
    "--seqlen 4096 --causal --window-left 1000 --fwd-workspace yes" "--seqlen 2500 --window-left 40 --window-right 0 --fwd-workspace yes" \
    "--seqlen 8192 --causal --batch 1 --heads 8" "--seqlen-q 1200 --seqlen-k 5000 --causal --fwd-workspace yes" \
    "--seqlen-q 5000 --seqlen-k 1200 --causal --fwd-workspace no" "--seqlen 2300 --causal --scale 30 --fwd-workspace yes" \
    "--seqlen 3000 --causal --scale 300 --fwd-workspace yes" \
    "--seqlen 2900 --window-left 300 --window-right 100 --scale 50 --fwd-workspace yes"
}

# chk_full64: d 64's long unmasked checks (for FLASHCUTE_SM90_FWD_MASKED_FULL_MIN_SEQLEN_K builds, 12):
# ragged and unequal lengths past 4k keys, GQA / MQA, with and without a workspace, huge logits.
chk_full64() {
  chk 64 "--seqlen 4096 --fwd-workspace yes" "--seqlen 4096 --fwd-workspace no" "--seqlen 4100 --fwd-workspace yes" \
    "--seqlen-q 1000 --seqlen-k 5000 --fwd-workspace yes" "--seqlen-q 5000 --seqlen-k 4300 --fwd-workspace no" \
    "--seqlen 6000 --heads-kv 4 --fwd-workspace yes" "--seqlen 4500 --heads-kv 1 --fwd-workspace no" \
    "--seqlen 8192 --batch 1 --heads 8 --fwd-workspace yes" "--seqlen 16384 --batch 1 --heads 2 --fwd-workspace no" \
    "--seqlen-q 1 --seqlen-k 4096 --fwd-workspace yes" "--seqlen 4200 --scale 30 --fwd-workspace yes" \
    "--seqlen 5000 --scale 300 --fwd-workspace no"
}

# chk_clusters256: d 256's unmasked shapes from 512 keys (9; session 72's
# FLASHCUTE_SM90_FWD_CLUSTER_MIN_SEQLEN_K=512 build, the clusters below their 4096-key limit): with and
# without a workspace, GQA / MQA, unequal lengths, huge logits.
chk_clusters256() {
  chk 256 "--seqlen 512 --fwd-workspace yes" "--seqlen 512 --fwd-workspace no" \
    "--seqlen 1024 --fwd-workspace yes" "--seqlen 1000 --fwd-workspace no" "--seqlen 2048 --heads-kv 2 --fwd-workspace yes" \
    "--seqlen-q 512 --seqlen-k 1500 --fwd-workspace yes" "--seqlen-q 700 --seqlen-k 600 --fwd-workspace no" \
    "--seqlen 1536 --heads-kv 1 --fwd-workspace no" "--seqlen 600 --scale 30 --fwd-workspace yes"
}

# gtest_carried [EXE:SHARDS]...: the GPU test executables of the carried ${TESTS_TAR:-build/tests.tar.xz} (built
# on the CPU machine: a tar of a build's tests/gpu_test_*, xz), unpacked into build/t; every executable at
# once, those named with SHARDS>1 split into that many GoogleTest shards (the grids' fp64 references
# are CPU-bound: session 73's fwd_grid took 184 s whole). Logs: $O/r/gtest-<exe>-<shard>.log; one line
# per run in $O/r/gtest.txt (rc= first, for tally). Each run may take ${GTEST_TIMEOUT:-200} s, never
# past the call's deadline (left). Returns once every run ended.
gtest_carried() {
  mkdir -p build/t && tar xJf "${TESTS_TAR:-build/tests.tar.xz}" -C build/t || return 1
  local -A shards=()
  local a exe n i pids=()
  for a in "$@"; do shards[${a%%:*}]=${a##*:}; done
  for exe in build/t/gpu_test_*; do
    exe=$(basename "$exe")
    n=${shards[$exe]:-1}
    for ((i = 0; i < n; i++)); do
      ( GTEST_TOTAL_SHARDS=$n GTEST_SHARD_INDEX=$i timeout "$(left "${GTEST_TIMEOUT:-200}")" "build/t/$exe" --gtest_brief=1 \
          > "$O/r/gtest-$exe-$i.log" 2>&1
        echo "rc=$? $exe shard $i/$n $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$O/r/gtest-$exe-$i.log" | tr '\n' ' ')" >> "$O/r/gtest.txt" ) &
      pids+=($!)
    done
  done
  wait "${pids[@]}"
}

# tally FILE: "N pass, M not" of a checks or sanitizer file, and its first failing lines.
tally() {
  echo "$(basename "$1"): $(grep -c '^rc=0' "$1") pass, $(grep -vc '^rc=0' "$1") not"
  grep -v '^rc=0' "$1" | head -3
}

# pack: the call's results in $O/r with this machine's paths rewritten (the repository to <repo>,
# $O to $OUT) in its .md, .log, .txt and .csv files at any depth (gpu_check's gc/ folder too; JSON
# records are left as written), then packed into $O/r.tgz (what comes back if the call is cut).
pack() {
  find "$O/r" -type f \( -name '*.md' -o -name '*.log' -o -name '*.txt' -o -name '*.csv' \) \
    -exec sed -i "s#$O#\$OUT#g; s#$PWD#<repo>#g" {} +
  tar czf "$O/r.tgz" -C "$O" r
}

# gpu_check [CMAKE_ARGS]: scripts/gpu-check of this tree (${FLASHCUTE_STEPS:-build tests pytest}, the GPU
# tests by gtest; CMAKE_ARGS default -DFLASHCUTE_ARCHS=90a) into $O/r/gc, its console in
# $O/r/gpucheck.log (the build log's gzipped copy dropped). With a carried .deps/clp (scripts/carry-headers),
# CUTLASS comes from there. Returns gpu-check's status.
gpu_check() {
  [ -d .deps/clp ] && export CUTLASS_DIR=$PWD/.deps/clp
  mkdir -p "$O/r/gc"
  OUT=$O/r/gc FLASHCUTE_STEPS="${FLASHCUTE_STEPS:-build tests pytest}" FLASHCUTE_TEST_RUNNER=gtest \
    FLASHCUTE_CMAKE_ARGS="${1:--DFLASHCUTE_ARCHS=90a}" scripts/gpu-check > "$O/r/gpucheck.log" 2>&1
  local rc=$?
  echo "gpu-check rc=$rc at $SECONDS s"
  tail -25 "$O/r/gpucheck.log"
  rm -f "$O/r/gc/build.log.gz"
  return $rc
}

# steady_part NAME VARIANT ITERS DTYPE ROUNDS CASES...: one ab_steady run of variant VARIANT (a folder
# of $B, or BASE,VARIANT for an A/B) against cuDNN over CASES (D:yes|no:SEQLEN), ITERS launches per phase, into $O/r/NAME.md, .log
# and NAME-round<r>.json (bench/sm90_targets.py reads those). Skipped once $SECONDS passes
# ${STEADY_DEADLINE:-430}; each run may take ${STEADY_TIMEOUT:-150} s.
steady_part() {
  local name=$1 v=$2 n=$3 dt=$4 rounds=$5 c
  shift 5
  [ "$SECONDS" -gt "${STEADY_DEADLINE:-430}" ] && { echo "skip $name (time)"; return; }
  local t0=$SECONDS cases=()
  for c in "$@"; do cases+=(--case "$c"); done
  timeout "${STEADY_TIMEOUT:-150}" python3 bench/ab_steady.py --bin-dir "$B" --variants "$v" --peer sdpa_cudnn "${cases[@]}" \
    --iters "$n" --rounds "$rounds" --dtype "$dt" --out "$O/r/$name.md" --records "$O/r/$name" > "$O/r/$name.log" 2>&1
  echo "$name rc=$? ($((SECONDS - t0)) s)"
  grep "^| [0-9]" "$O/r/$name.md"  # the data rows (a row starts with its head dim)
}

# left N: seconds a step may take: N, or fewer so that it ends ${DEADLINE:-580} s into the call (at least 1),
# so that pack still runs before the call's limit.
left() {
  local l=$(( ${DEADLINE:-580} - SECONDS ))
  (( l > $1 )) && l=$1
  (( l < 1 )) && l=1
  echo $l
}

# prebuilt_module: the Python module of this tree linked against the carried build/lib90.tar.xz
# (libflashcute.a built on the CPU machine, -DFLASHCUTE_PREBUILT_LIBRARY: no kernel compiles here) in
# build/gpu, its log in $O/r/build.log; exports PYTHONPATH to it. Returns the build's status.
prebuilt_module() {
  local t0=$SECONDS rc
  mkdir -p build/prebuilt && tar xJf build/lib90.tar.xz -C build/prebuilt
  cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLASHCUTE_PREBUILT_LIBRARY="$PWD/build/prebuilt/libflashcute.a" \
    -DFLASHCUTE_BUILD_PYTHON=ON -DFLASHCUTE_BUILD_TESTS=OFF -DFLASHCUTE_BUILD_APPS=OFF > "$O/r/build.log" 2>&1 \
    && cmake --build build/gpu --target flashcute_ext -j16 >> "$O/r/build.log" 2>&1
  rc=$?
  echo "build rc=$rc ($((SECONDS - t0)) s)"
  export PYTHONPATH=$PWD/build/gpu/python
  return $rc
}
