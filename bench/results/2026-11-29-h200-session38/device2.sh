#!/usr/bin/env bash
# Session 38, call 2 (H200): where a d 128 tile's time goes with and without the carried loop.
# Probe builds made on the CPU machine (bf16, d 128 only, sm_90a, FLASHCUTE_SM90_FWD_TIMELINE=1), in
# build/ab38bin: tlb (session 37's probe build of main's protocol, Q_BUFS=1), tlc (CARRY=1, this
# tree). Stamps of the persistent kernel (dynamic scheduler) at non-causal 512 and 1k and causal 512.
O=${OUT:-gpu-out}; mkdir -p $O/r
B=build/ab38bin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
for v in tlb tlc; do echo "$v $(sha1sum < $B/$v/flashcute | cut -c1-12)"; done | tee $O/r/binaries.txt
for v in tlb tlc; do
  for cs in false:512 false:1024 true:512; do
    c=${cs%:*}; s=${cs#*:}
    FLASHCUTE_TIMELINE_OUT=$O/r/timeline-$v-$c-$s.bin timeout 60 $B/$v/flashcute bench --backend sm90 --dtype bf16 --d 128 \
      --seqlen $s --causal $c --pass fwd --warmup 20 --iters 30 --no-flush --fwd-workspace zeroed > $O/r/timeline-$v-$c-$s.txt 2>&1
    echo "timeline $v causal=$c $s rc=$?: $(grep -i tflop $O/r/timeline-$v-$c-$s.txt | head -1 | cut -c1-150)"
    python3 bench/tile_timeline.py $O/r/timeline-$v-$c-$s.bin --label "$v causal=$c $s" --md $O/r/timeline.md > /dev/null
    gzip -9 $O/r/timeline-$v-$c-$s.bin
  done
done
head -60 $O/r/timeline.md
cd $O && tar czf r.tgz r && rm -rf r
