#!/usr/bin/env bash
# Session 30, call 5: (1) the dynamic scheduler for every problem given a workspace (`dyn`:
# FLASHCUTE_SM90_FWD_DYNAMIC=1) against the rows' limits (`base30`: this tree, d 64 up to 2k keys,
# d 128 up to 4k), bf16 d 64 + d 128 CLI builds made on the CPU machine (build/ab30); (2)
# scripts/gpu-check's build on this fresh machine, for the second grid run (device6.sh).
O=${OUT:-gpu-out}; mkdir -p $O/r
for v in base30 dyn; do echo "--fwd-workspace zeroed" > build/ab30/$v/args; done
run() { out=$(timeout 60 build/ab30/dyn/flashcute run --dtype bf16 --backend sm90 --check-heads 2 --iters 5 "$@" 2>&1); echo "rc=$? dyn $* :: $(echo "$out" | grep -i -E 'max|check|repeat' | tr '\n' ' ' | cut -c1-300)"; }
{ run --d 64 --batch 2 --heads 32 --seqlen 8192 --fwd-workspace zeroed
  run --d 128 --batch 2 --heads 16 --seqlen 8192 --causal --fwd-workspace zeroed
  run --d 128 --batch 1 --heads 16 --seqlen 16384 --fwd-workspace zeroed; } > $O/r/checks-dyn.txt 2>&1
grep -c '^rc=0' $O/r/checks-dyn.txt
timeout 200 python3 bench/ab_steady.py --bin-dir build/ab30 --variants base30,dyn \
  --case 64:no:4096 --case 64:no:8192 --case 64:no:16384 --case 128:no:8192 --case 128:yes:8192 \
  --case 128:no:16384 --case 128:yes:16384 --iters 1000 --rounds 2 --out $O/r/ab-dyn.md > $O/r/ab-dyn.log 2>&1
echo "ab rc=$?"; tail -9 $O/r/ab-dyn.md
tar czf $O/r.tgz -C $O r && rm -rf $O/r
OUT=$OUT FLASHCUTE_STEPS="build" FLASHCUTE_CMAKE_ARGS="-DFLASHCUTE_ARCHS=90a" timeout 380 scripts/gpu-check > $OUT/gpu-check-console-build.txt 2>&1
echo "gpu-check build rc=$?"; echo "ptxas reports: $(grep -c 'spill stores' $OUT/build.log), with spills: $(grep 'spill stores' $OUT/build.log | grep -vc ' 0 bytes spill stores')"
gzip -f $OUT/build.log
