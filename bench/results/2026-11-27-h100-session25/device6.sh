#!/usr/bin/env bash
# Call 6: `qf` = `all` + the tile's Q issued before its first K (early Q release): checks, timeline, A/B.
S=bench/results/2026-11-27-h100-session23
mkdir -p ab-bin/base ab-bin/all ab-bin/qf
cp build/cli/apps/flashcute ab-bin/base/; cp build/all/apps/flashcute ab-bin/all/; cp build/qf/apps/flashcute ab-bin/qf/
DIMS=128 timeout 150 bash $S/checks.sh ab-bin/qf/flashcute > $OUT/checks-qf.txt 2>&1; echo "checks rc=$?" >> $OUT/checks-qf.txt
DIMS=128 timeout 150 bash $S/checks-spec.sh ab-bin/qf/flashcute > $OUT/checks-spec-qf.txt 2>&1; echo "checks-spec rc=$?" >> $OUT/checks-spec-qf.txt
tail -1 $OUT/checks-qf.txt; tail -1 $OUT/checks-spec-qf.txt; grep -c '^rc=0' $OUT/checks-qf.txt $OUT/checks-spec-qf.txt
for c in "512 false" "2048 false" "512 true"; do set -- $c
  FLASHCUTE_TIMELINE_OUT=tl.bin timeout 60 build/probe-qf/apps/flashcute bench --dtype bf16 --d 128 --seqlen $1 --causal $2 \
    --pass fwd --backend sm90 --warmup 3 --iters 3 --no-flush > /dev/null 2>&1
  python3 bench/tile_timeline.py tl.bin --label "probe-qf: d 128 bf16 seqlen $1 causal $2" --md $OUT/timeline-qf.md > /dev/null
done
timeout 300 python3 bench/ab_steady.py --bin-dir ab-bin --variants base,all,qf \
  --case 128:no:512 --case 128:no:1024 --case 128:no:2048 --case 128:yes:512 --case 128:yes:2048 \
  --iters 1000 --rounds 2 --out $OUT/ab-qf.md > $OUT/ab-qf.log 2>&1
tail -25 $OUT/ab-qf.md; grep -A14 'seqlen 512 causal false' $OUT/timeline-qf.md
