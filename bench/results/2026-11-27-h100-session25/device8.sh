#!/usr/bin/env bash
# Call 8: `dq` = all + a second Q buffer (the next tile's Q issued one tile ahead, after this tile's
# first block), `dqa` = early Q release + the second buffer only: checks, sanitizer, timeline, A/B.
S=bench/results/2026-11-27-h100-session23
mkdir -p ab-bin/base ab-bin/dq ab-bin/dqa
cp build/cli/apps/flashcute ab-bin/base/; cp build/dq/apps/flashcute ab-bin/dq/; cp build/dqa/apps/flashcute ab-bin/dqa/
DIMS=128 timeout 150 bash $S/checks.sh ab-bin/dq/flashcute > $OUT/checks-dq.txt 2>&1; echo "checks rc=$?" >> $OUT/checks-dq.txt
DIMS=128 timeout 150 bash $S/checks-spec.sh ab-bin/dq/flashcute > $OUT/checks-spec-dq.txt 2>&1; echo "checks-spec rc=$?" >> $OUT/checks-spec-dq.txt
tail -1 $OUT/checks-dq.txt; tail -1 $OUT/checks-spec-dq.txt; grep -c '^rc=0' $OUT/checks-dq.txt $OUT/checks-spec-dq.txt
for tool in synccheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool ab-bin/dq/flashcute bench --dtype bf16 --d 128 --seqlen 512 --causal false \
    --pass fwd --backend sm90 --warmup 0 --iters 1 --no-flush --tokens 32768 --hidden 1024 > $OUT/san-$tool-dq.txt 2>&1
  echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san-$tool-dq.txt | tr '\n' ' ')"
done
for c in "512 false" "2048 false" "512 true"; do set -- $c
  FLASHCUTE_TIMELINE_OUT=tl.bin timeout 60 build/probe-dq/apps/flashcute bench --dtype bf16 --d 128 --seqlen $1 --causal $2 \
    --pass fwd --backend sm90 --warmup 3 --iters 3 --no-flush > /dev/null 2>&1
  python3 bench/tile_timeline.py tl.bin --label "probe-dq: d 128 bf16 seqlen $1 causal $2" --md $OUT/timeline-dq.md > /dev/null
done
timeout 250 python3 bench/ab_steady.py --bin-dir ab-bin --variants base,dq,dqa \
  --case 128:no:512 --case 128:no:1024 --case 128:no:2048 --case 128:yes:512 --case 128:yes:2048 \
  --iters 1000 --rounds 2 --out $OUT/ab-dq.md > $OUT/ab-dq.log 2>&1
tail -9 $OUT/ab-dq.md; grep -A16 'seqlen 512 causal false' $OUT/timeline-dq.md | tail -13
