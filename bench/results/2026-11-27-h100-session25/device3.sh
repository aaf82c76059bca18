#!/usr/bin/env bash
# Call 3: per-tile timeline of the d 128 SM90 forward (probe build), and the probe's perturbation.
P=build/probe/apps/flashcute
B=build/cli/apps/flashcute
for c in "512 false" "2048 false" "8192 false" "512 true" "2048 true"; do
  set -- $c
  FLASHCUTE_TIMELINE_OUT=$OUT/tl-d128-$1-causal-$2.bin timeout 60 $P bench --dtype bf16 --d 128 --seqlen $1 --causal $2 \
    --pass fwd --backend sm90 --warmup 3 --iters 3 --no-flush > /dev/null 2>&1
  python3 bench/tile_timeline.py $OUT/tl-d128-$1-causal-$2.bin --label "d 128 bf16 seqlen $1 causal $2" --md $OUT/timeline.md > /dev/null
done
echo "## perturbation (flashcute bench, 300 launches, no flush)" >> $OUT/timeline.md
for r in 1 2; do for bin in $B $P; do for c in "512 false" "8192 false"; do set -- $c
  echo "$bin $1 $2: $(timeout 60 $bin bench --dtype bf16 --d 128 --seqlen $1 --causal $2 --pass fwd --backend sm90 --warmup 20 --iters 300 --no-flush | grep TFLOP)" >> $OUT/timeline.md
done; done; done
cat $OUT/timeline.md
