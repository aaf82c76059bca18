#!/usr/bin/env bash
# Call 4: the timeline of the early-Q-release build (d 128) beside the probe build of main, and
# their throughput (flashcute bench, 300 launches, no flush, 2 rounds).
for v in probe probe-eq; do
  for c in "512 false" "2048 false" "512 true"; do set -- $c
    FLASHCUTE_TIMELINE_OUT=$OUT/tl-$v-d128-$1-causal-$2.bin timeout 60 build/$v/apps/flashcute bench --dtype bf16 --d 128 --seqlen $1 --causal $2 \
      --pass fwd --backend sm90 --warmup 3 --iters 3 --no-flush > /dev/null 2>&1
    python3 bench/tile_timeline.py $OUT/tl-$v-d128-$1-causal-$2.bin --label "$v: d 128 bf16 seqlen $1 causal $2" --md $OUT/timeline4.md > /dev/null
  done
done
echo "## throughput (flashcute bench, 300 launches, no flush)" >> $OUT/timeline4.md
for r in 1 2; do for v in cli probe probe-eq; do for c in "512 false" "1024 false" "2048 false" "512 true"; do set -- $c
  echo "$v $1 $2: $(timeout 60 build/$v/apps/flashcute bench --dtype bf16 --d 128 --seqlen $1 --causal $2 --pass fwd --backend sm90 --warmup 20 --iters 300 --no-flush | grep TFLOP)" >> $OUT/timeline4.md
done; done; done
cd $OUT && tar czf tl4.tgz *.bin && rm -f *.bin; cat timeline4.md
