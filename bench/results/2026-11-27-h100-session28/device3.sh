#!/usr/bin/env bash
# Session 28, call 3: `pf2` (FLASHCUTE_SM90_FWD_PREFETCH_TILE=2: the producer decodes each tile and
# the ring carries it; the consumers read it under their tile's last P V) and `pf2e` (pf2 + the
# d 128 row's early Q release, FLASHCUTE_SM90_FWD_EARLY_Q=1) against main's kernels (`base`,
# a41957b): fp64 checks, compute-sanitizer on persistent problems, a timeline, A/B. d 128 bf16.
O=${OUT:-gpu-out}; mkdir -p $O/r
S=bench/results/2026-11-27-h100-session23
mkdir -p ab-bin/base ab-bin/pf2 ab-bin/pf2e
cp build/land27/apps/flashcute ab-bin/base/; cp build/pf2/apps/flashcute ab-bin/pf2/; cp build/pf2e/apps/flashcute ab-bin/pf2e/
DIMS=128 timeout 100 bash $S/checks.sh ab-bin/pf2e/flashcute > $O/r/checks-pf2e.txt 2>&1; echo "checks rc=$?" >> $O/r/checks-pf2e.txt
DIMS=128 timeout 110 bash $S/checks-spec.sh ab-bin/pf2e/flashcute > $O/r/checks-spec-pf2e.txt 2>&1; echo "checks-spec rc=$?" >> $O/r/checks-spec-pf2e.txt
for v in pf2 pf2e; do
run() { out=$(timeout 60 ab-bin/$v/flashcute run --backend sm90 --dtype bf16 --d 128 --check-heads 3 --iters 3 "$@" 2>&1); echo "rc=$? $v $* :: $(echo "$out" | grep -i -E 'max|err|check' | tr '\n' ' ' | cut -c1-200)"; }
{ run --batch 4 --heads 8 --seqlen 512 --fwd-workspace no
  run --batch 4 --heads 8 --seqlen 1000 --causal --fwd-workspace no
  run --batch 6 --heads 16 --seqlen 700 --causal --fwd-workspace yes
  run --batch 2 --heads 8 --seqlen-q 200 --seqlen-k 900 --fwd-workspace yes
  run --batch 3 --heads 8 --seqlen-q 600 --seqlen-k 90 --fwd-workspace yes
  run --batch 2 --heads 8 --seqlen 4000 --scale 30 --fwd-workspace yes; } >> $O/r/checks-persistent.txt 2>&1
done
tail -1 $O/r/checks-pf2e.txt; tail -1 $O/r/checks-spec-pf2e.txt
grep -c '^rc=0' $O/r/checks-pf2e.txt $O/r/checks-spec-pf2e.txt $O/r/checks-persistent.txt
grep -h '^rc=' $O/r/checks-*.txt | grep -v '^rc=0' | cut -c1-200 | head -5
for tool in synccheck racecheck; do
  for c in "512 false" "1024 true"; do set -- $c
    timeout 60 compute-sanitizer --tool $tool ab-bin/pf2e/flashcute bench --dtype bf16 --d 128 --seqlen $1 --causal $2 \
      --pass fwd --backend sm90 --warmup 0 --iters 1 --no-flush --tokens 32768 --hidden 1024 > $O/r/san-$tool-pf2e-$1.txt 2>&1
    echo "$tool $1 rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $O/r/san-$tool-pf2e-$1.txt | tr '\n' ' ')"
  done
done
for c in "512 false" "2048 false" "512 true"; do set -- $c
  FLASHCUTE_TIMELINE_OUT=tl.bin timeout 60 build/probe-pf2e/apps/flashcute bench --dtype bf16 --d 128 --seqlen $1 --causal $2 \
    --pass fwd --backend sm90 --warmup 3 --iters 3 --no-flush > /dev/null 2>&1
  python3 bench/tile_timeline.py tl.bin --label "probe-pf2e: d 128 bf16 seqlen $1 causal $2" --md $O/r/timeline-pf2e.md > /dev/null
done
timeout 330 python3 bench/ab_steady.py --bin-dir ab-bin --variants base,pf2,pf2e \
  --case 128:no:512 --case 128:no:1024 --case 128:no:2048 --case 128:no:4096 --case 128:yes:512 \
  --case 128:yes:1024 --case 128:yes:2048 --case 128:yes:4096 --iters 1000 --rounds 2 --out $O/r/ab-pf2.md > $O/r/ab-pf2.log 2>&1
echo "ab rc=$?"; tail -10 $O/r/ab-pf2.md
grep -A14 'seqlen 512 causal false' $O/r/timeline-pf2e.md | tail -12
tar czf $O/r.tgz -C $O r && rm -rf $O/r
