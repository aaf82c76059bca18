#!/usr/bin/env bash
# Session 48, call 3 (H200): scripts/gpu-check (build, tests, pytest; sm_90a, every bucket, both
# dtypes, the gtest runner) on this session's tree (d 256's early_q_release on), then the same switch
# in fp16 (eq256h: -DFLASHCUTE_SM90_FWD_EARLY_Q=1) against main's fp16 d 256 kernels (base256h),
# ab_steady with cuDNN in the same rounds (CLI builds from the CPU machine).
O=${OUT:-gpu-out}
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv,noheader > $O/gpu.txt
OUT=$O FLASHCUTE_STEPS="build tests pytest" FLASHCUTE_TEST_RUNNER=gtest FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a" \
  timeout 420 scripts/gpu-check > $O/gpu-check-console.txt 2>&1
echo "gpu-check rc=$?"; tail -n 30 $O/gpu-check-console.txt
grep -c "bytes spill stores" $O/build.log; grep -E "[1-9][0-9]* bytes spill stores" $O/build.log | head -3; grep -c "C751" $O/build.log
sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/*.log $O/*.txt $O/*.json 2>/dev/null
gzip -f $O/build.log $O/tests.log 2>/dev/null
[[ -d $O/gtest ]] && tar czf $O/gtest-logs.tgz -C $O gtest && rm -rf $O/gtest
mkdir -p $O/r
source bench/device_lib.sh
B=build/vbin
bins base256h eq256h > $O/r/bins.txt
for ci in yes:512:5000 yes:1024:2500 no:512:5000; do
  c=${ci%%:*}; r=${ci#*:}; s=${r%:*}; n=${r#*:}; t0=$SECONDS
  [ $SECONDS -gt 530 ] && { echo "skip fp16 d256 $ci (time)"; continue; }
  timeout 60 python3 bench/ab_steady.py --bin-dir $B --variants base256h,eq256h --peer sdpa_cudnn --case 256:$c:$s \
    --iters $n --rounds 3 --dtype fp16 --out $O/r/ab256-fp16-$c$s.md > $O/r/ab256-fp16-$c$s.log 2>&1
  echo "ab fp16 d256 causal=$c $s rc=$? ($((SECONDS - t0)) s)"; grep "^| 256" $O/r/ab256-fp16-$c$s.md
done
sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*.md $O/r/*.log $O/r/*.txt 2>/dev/null
ls $O
