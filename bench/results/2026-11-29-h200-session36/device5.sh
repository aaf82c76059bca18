#!/usr/bin/env bash
# Session 36, call 5 (H200): probe builds (bf16 d 64, FLASHCUTE_SM90_FWD_TIMELINE=1, WG_Q=2, the
# producer's issue of each Q slice recorded too), in build/ab36bin: tl3 (4 K/V stages, the default)
# and tl3s8 (D64_SHORT_STAGES=8). One launch each at causal 512 and 1k (ab_steady's shapes).
O=${OUT:-gpu-out}; mkdir -p $O/r
B=build/ab36bin
for v in tl3 tl3s8; do echo "$v $(md5sum < $B/$v/flashcute | cut -c1-12)"; done | tee $O/r/binaries.txt
for v in tl3 tl3s8; do
  for s in 512 1024; do
    FLASHCUTE_TIMELINE_OUT=$O/r/timeline-$v-$s.bin timeout 60 $B/$v/flashcute bench --backend sm90 --dtype bf16 --d 64 \
      --seqlen $s --causal true --pass fwd --warmup 20 --iters 30 --no-flush --fwd-workspace zeroed > $O/r/timeline-$v-$s.txt 2>&1
    echo "timeline $v $s rc=$?"
    python3 bench/tile_timeline.py $O/r/timeline-$v-$s.bin --label "$v causal $s" --md $O/r/timeline.md > /dev/null
  done
done
grep -E '^### |Q slice|share|tile start -> Q' $O/r/timeline.md
cd $O && tar czf r.tgz r && rm -rf r
