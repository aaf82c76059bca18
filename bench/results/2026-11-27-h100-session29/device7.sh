#!/usr/bin/env bash
# Session 29, call 7: a tile of the persistent d 128 kernel on a finer timeline. Probe build
# (`probe29`: -DFLASHCUTE_SM90_FWD_TIMELINE=1, bf16 d 128, this session's tree) with 12 stamps per
# consumer warpgroup: the epilogue in parts (LSE stored, sO's WAR barrier, O in smem, O's barrier,
# TMA store issued) and the tile index's read from the ring before the tile's start.
O=${OUT:-gpu-out}; mkdir -p $O/r
B=build/probe29/apps/flashcute
for c in "512 false" "1024 false" "2048 false" "512 true"; do set -- $c
  FLASHCUTE_TIMELINE_OUT=tl.bin timeout 60 $B bench --dtype bf16 --d 128 --seqlen $1 --causal $2 \
    --pass fwd --backend sm90 --warmup 3 --iters 3 --no-flush > /dev/null 2>&1
  echo "bench $1 $2 rc=$?"
  python3 bench/tile_timeline.py tl.bin --label "probe29: d 128 bf16 seqlen $1 causal $2" --md $O/r/timeline-probe29.md > /dev/null
done
cat $O/r/timeline-probe29.md
tar czf $O/r.tgz -C $O r
