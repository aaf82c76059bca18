#!/usr/bin/env bash
# Call 7: the same variants on the static deal (no workspace: no tile-counter atomic on the
# producer's path between a tile's last load and the next tile's Q): timeline and A/B.
for v in cli:base all:all qf:qf; do b=${v%%:*}; n=${v#*:}; mkdir -p ab-bin/$n-nows; cp build/$b/apps/flashcute ab-bin/$n-nows/; echo "--fwd-workspace no" > ab-bin/$n-nows/args; done
for v in probe probe-qf; do for c in "512 false" "512 true"; do set -- $c
  FLASHCUTE_TIMELINE_OUT=tl.bin timeout 60 build/$v/apps/flashcute bench --dtype bf16 --d 128 --seqlen $1 --causal $2 \
    --pass fwd --backend sm90 --warmup 3 --iters 3 --no-flush --fwd-workspace no > /dev/null 2>&1
  python3 bench/tile_timeline.py tl.bin --label "$v, no workspace (static deal): d 128 bf16 seqlen $1 causal $2" --md $OUT/timeline-nows.md > /dev/null
done; done
timeout 260 python3 bench/ab_steady.py --bin-dir ab-bin --variants base-nows,all-nows,qf-nows \
  --case 128:no:512 --case 128:no:1024 --case 128:yes:512 --case 128:yes:1024 \
  --iters 1000 --rounds 2 --out $OUT/ab-nows.md > $OUT/ab-nows.log 2>&1
tail -12 $OUT/ab-nows.md; grep -B2 -A14 'qf, no workspace (static deal): d 128 bf16 seqlen 512 causal false' $OUT/timeline-nows.md | tail -14; grep -A16 'probe, no workspace (static deal): d 128 bf16 seqlen 512 causal false' $OUT/timeline-nows.md | tail -4
