#!/usr/bin/env bash
# Session 28, call 1: `pf` (persistent consumers read and decode their next tile under the tile's
# last P V: FLASHCUTE_SM90_FWD_PREFETCH_TILE=1) and `pfl` (pf + the speculative recompute's
# coordinates from an opaque thread index: FLASHCUTE_SM90_FWD_RECOMPUTE_OPAQUE=1) against main's
# kernels (`base`, a41957b): fp64 checks, compute-sanitizer on persistent problems, per-tile
# timelines (probe builds with and without the prefetch), A/B at the steady state. d 128 bf16 builds.
O=${OUT:-gpu-out}; mkdir -p $O
S=bench/results/2026-11-27-h100-session23
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,power.limit --format=csv > $O/gpu.txt
mkdir -p ab-bin/base ab-bin/pf ab-bin/pfl
cp build/land27/apps/flashcute ab-bin/base/; cp build/pf/apps/flashcute ab-bin/pf/; cp build/pfl/apps/flashcute ab-bin/pfl/
DIMS=128 timeout 100 bash $S/checks.sh ab-bin/pf/flashcute > $O/checks-pf.txt 2>&1; echo "checks rc=$?" >> $O/checks-pf.txt
DIMS=128 timeout 110 bash $S/checks-spec.sh ab-bin/pfl/flashcute > $O/checks-spec-pfl.txt 2>&1; echo "checks-spec rc=$?" >> $O/checks-spec-pfl.txt
# The static deal (no workspace) and the dynamic scheduler on persistent problems, causal and not.
run() { out=$(timeout 60 ab-bin/pf/flashcute run --backend sm90 --dtype bf16 --d 128 --check-heads 3 --iters 3 "$@" 2>&1); echo "rc=$? $* :: $(echo "$out" | grep -i -E 'max|err|check' | tr '\n' ' ' | cut -c1-200)"; }
{ run --batch 4 --heads 8 --seqlen 512 --fwd-workspace no
  run --batch 4 --heads 8 --seqlen 1000 --causal --fwd-workspace no
  run --batch 6 --heads 16 --seqlen 700 --causal --fwd-workspace yes
  run --batch 2 --heads 8 --seqlen-q 200 --seqlen-k 900 --fwd-workspace yes; } > $O/checks-pf-persistent.txt 2>&1
tail -1 $O/checks-pf.txt; tail -1 $O/checks-spec-pfl.txt
grep -c '^rc=0' $O/checks-pf.txt $O/checks-spec-pfl.txt $O/checks-pf-persistent.txt
grep -h '^rc=' $O/checks-pf.txt $O/checks-spec-pfl.txt $O/checks-pf-persistent.txt | grep -v '^rc=0' | cut -c1-200 | head -5
for tool in synccheck racecheck; do
  for c in "512 false" "1024 true"; do set -- $c
    timeout 60 compute-sanitizer --tool $tool ab-bin/pf/flashcute bench --dtype bf16 --d 128 --seqlen $1 --causal $2 \
      --pass fwd --backend sm90 --warmup 0 --iters 1 --no-flush --tokens 32768 --hidden 1024 > $O/san-$tool-pf-$1.txt 2>&1
    echo "$tool $1 rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $O/san-$tool-pf-$1.txt | tr '\n' ' ')"
  done
done
for v in base pf; do
  for c in "512 false" "2048 false" "512 true"; do set -- $c
    FLASHCUTE_TIMELINE_OUT=tl.bin timeout 60 build/probe-$v/apps/flashcute bench --dtype bf16 --d 128 --seqlen $1 --causal $2 \
      --pass fwd --backend sm90 --warmup 3 --iters 3 --no-flush > /dev/null 2>&1
    python3 bench/tile_timeline.py tl.bin --label "probe-$v: d 128 bf16 seqlen $1 causal $2" --md $O/timeline-$v.md > /dev/null
  done
done
timeout 330 python3 bench/ab_steady.py --bin-dir ab-bin --variants base,pf,pfl \
  --case 128:no:512 --case 128:no:1024 --case 128:no:2048 --case 128:no:4096 --case 128:yes:512 \
  --case 128:yes:2048 --case 128:yes:4096 --case 128:no:8192 --iters 1000 --rounds 2 --out $O/ab-pf.md > $O/ab-pf.log 2>&1
echo "ab rc=$?"; tail -10 $O/ab-pf.md
grep -A14 'seqlen 512 causal false' $O/timeline-base.md | tail -12; grep -A14 'seqlen 512 causal false' $O/timeline-pf.md | tail -12
