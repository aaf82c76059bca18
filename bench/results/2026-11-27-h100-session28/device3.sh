#!/usr/bin/env bash
# Session 28, call 2: the prefetch (`pf`, call 1's build) with the d 128 row's early Q release
# (`pfe`: FLASHCUTE_SM90_FWD_PREFETCH_TILE=1, FLASHCUTE_SM90_FWD_EARLY_Q=1) and with the
# recompute's opaque coordinates on top (`pfle`: + FLASHCUTE_SM90_FWD_RECOMPUTE_OPAQUE=1), against
# main's kernels (`base`, a41957b): fp64 checks and compute-sanitizer of pfle, a timeline of pfe,
# A/B. d 128 bf16 builds. Results come back as one tar (the device tool returns at most 8 files).
O=${OUT:-gpu-out}; mkdir -p $O/r
S=bench/results/2026-11-27-h100-session23
mkdir -p ab-bin/base ab-bin/pf ab-bin/pfe ab-bin/pfle
for v in pf pfe pfle; do cp build/$v/apps/flashcute ab-bin/$v/; done; cp build/land27/apps/flashcute ab-bin/base/
DIMS=128 timeout 100 bash $S/checks.sh ab-bin/pfle/flashcute > $O/r/checks-pfle.txt 2>&1; echo "checks rc=$?" >> $O/r/checks-pfle.txt
DIMS=128 timeout 110 bash $S/checks-spec.sh ab-bin/pfle/flashcute > $O/r/checks-spec-pfle.txt 2>&1; echo "checks-spec rc=$?" >> $O/r/checks-spec-pfle.txt
run() { out=$(timeout 60 ab-bin/pfle/flashcute run --backend sm90 --dtype bf16 --d 128 --check-heads 3 --iters 3 "$@" 2>&1); echo "rc=$? $* :: $(echo "$out" | grep -i -E 'max|err|check' | tr '\n' ' ' | cut -c1-200)"; }
{ run --batch 4 --heads 8 --seqlen 512 --fwd-workspace no
  run --batch 4 --heads 8 --seqlen 1000 --causal --fwd-workspace no
  run --batch 6 --heads 16 --seqlen 700 --causal --fwd-workspace yes
  run --batch 2 --heads 8 --seqlen-q 200 --seqlen-k 900 --fwd-workspace yes
  run --batch 3 --heads 8 --seqlen-q 600 --seqlen-k 90 --fwd-workspace yes
  run --batch 2 --heads 8 --seqlen 4000 --scale 30 --fwd-workspace yes; } > $O/r/checks-persistent-pfle.txt 2>&1
tail -1 $O/r/checks-pfle.txt; tail -1 $O/r/checks-spec-pfle.txt
grep -c '^rc=0' $O/r/checks-pfle.txt $O/r/checks-spec-pfle.txt $O/r/checks-persistent-pfle.txt
grep -h '^rc=' $O/r/checks-*.txt | grep -v '^rc=0' | cut -c1-200 | head -5
for tool in synccheck racecheck; do
  for c in "512 false" "1024 true"; do set -- $c
    timeout 60 compute-sanitizer --tool $tool ab-bin/pfle/flashcute bench --dtype bf16 --d 128 --seqlen $1 --causal $2 \
      --pass fwd --backend sm90 --warmup 0 --iters 1 --no-flush --tokens 32768 --hidden 1024 > $O/r/san-$tool-pfle-$1.txt 2>&1
    echo "$tool $1 rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $O/r/san-$tool-pfle-$1.txt | tr '\n' ' ')"
  done
done
for c in "512 false" "2048 false" "512 true"; do set -- $c
  FLASHCUTE_TIMELINE_OUT=tl.bin timeout 60 build/probe-pfe/apps/flashcute bench --dtype bf16 --d 128 --seqlen $1 --causal $2 \
    --pass fwd --backend sm90 --warmup 3 --iters 3 --no-flush > /dev/null 2>&1
  python3 bench/tile_timeline.py tl.bin --label "probe-pfe: d 128 bf16 seqlen $1 causal $2" --md $O/r/timeline-pfe.md > /dev/null
done
timeout 300 python3 bench/ab_steady.py --bin-dir ab-bin --variants base,pf,pfe,pfle \
  --case 128:no:512 --case 128:no:1024 --case 128:no:2048 --case 128:no:4096 --case 128:yes:512 \
  --case 128:yes:1024 --case 128:yes:2048 --case 128:yes:4096 --iters 1000 --rounds 2 --out $O/r/ab-pfe.md > $O/r/ab-pfe.log 2>&1
echo "ab rc=$?"; tail -10 $O/r/ab-pfe.md
# The opaque recompute coordinates in the non-persistent kernel (long rows): pfle against base.
timeout 120 python3 bench/ab_steady.py --bin-dir ab-bin --variants base,pfle \
  --case 128:no:8192 --case 128:yes:8192 --case 128:no:16384 --iters 500 --rounds 2 --out $O/r/ab-pfle-long.md > $O/r/ab-pfle-long.log 2>&1
echo "ab rc=$?"; tail -5 $O/r/ab-pfle-long.md
grep -A14 'seqlen 512 causal false' $O/r/timeline-pfe.md | tail -12
tar czf $O/r.tgz -C $O r && rm -rf $O/r
