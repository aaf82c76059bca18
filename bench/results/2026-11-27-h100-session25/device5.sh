#!/usr/bin/env bash
# Call 5: the first tile block's chain (early Q release at d 128, ping-pong turns across tiles,
# the recompute's opaque coordinates): checks of the combined build, its timeline, and the A/B.
# (The stamp file was written to a temporary folder on the device in the run; here a relative name.)
S=bench/results/2026-11-27-h100-session23
mkdir -p ab-bin; for v in eq eqcont lnd all; do mkdir -p ab-bin/$v; cp build/$v/apps/flashcute ab-bin/$v/; done
mkdir -p ab-bin/base; cp build/cli/apps/flashcute ab-bin/base/
DIMS=128 timeout 150 bash $S/checks.sh ab-bin/all/flashcute > $OUT/checks-all.txt 2>&1; echo "checks rc=$?" >> $OUT/checks-all.txt
DIMS=128 timeout 150 bash $S/checks-spec.sh ab-bin/all/flashcute > $OUT/checks-spec-all.txt 2>&1; echo "checks-spec rc=$?" >> $OUT/checks-spec-all.txt
tail -1 $OUT/checks-all.txt; tail -1 $OUT/checks-spec-all.txt; grep -c '^rc=0' $OUT/checks-all.txt $OUT/checks-spec-all.txt
for c in "512 false" "2048 false" "512 true" "8192 false"; do set -- $c
  FLASHCUTE_TIMELINE_OUT=tl.bin timeout 60 build/probe-all/apps/flashcute bench --dtype bf16 --d 128 --seqlen $1 --causal $2 \
    --pass fwd --backend sm90 --warmup 3 --iters 3 --no-flush > /dev/null 2>&1
  python3 bench/tile_timeline.py tl.bin --label "probe-all: d 128 bf16 seqlen $1 causal $2" --md $OUT/timeline-all.md > /dev/null
done
timeout 330 python3 bench/ab_steady.py --bin-dir ab-bin --variants base,eq,eqcont,lnd,all \
  --case 128:no:512 --case 128:no:1024 --case 128:no:2048 --case 128:yes:512 --case 128:yes:2048 --case 128:no:8192 \
  --iters 1000 --rounds 2 --out $OUT/ab-first-block.md > $OUT/ab.log 2>&1
cat $OUT/ab-first-block.md | tail -30; head -30 $OUT/timeline-all.md
