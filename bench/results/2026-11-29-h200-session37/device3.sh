#!/usr/bin/env bash
# Session 37, call 3 (H200): where a d 128 tile's time goes with one and with two Q buffers.
# Probe builds made on the CPU machine (bf16, d 128 only, sm_90a, FLASHCUTE_SM90_FWD_TIMELINE=1), in
# build/ab37bin:
#   tlb   Q_BUFS=1 (main's protocol)      tlq   Q_BUFS=2
# Each stamps the tile timeline of the persistent kernel (dynamic scheduler) at non-causal 512 and
# 1k and causal 512 (ab_steady's shapes); bench/tile_timeline.py reads the dumps.
# Then ab_steady (with this session's fix: a CLI phase's NVML window is its launches) on call 1's base
# build (Q_BUFS=1) beside cuDNN at long rows, 3000 launches, to read both sides' clock and power.
O=${OUT:-gpu-out}; mkdir -p $O/r
B=build/ab37bin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
for v in tlb tlq; do echo "$v $(sha1sum < $B/$v/flashcute | cut -c1-12) $($B/$v/flashcute info 2>&1 | grep -o "dtypes=[a-z0-9,;]*" | head -1)"; done | tee $O/r/binaries.txt
for v in tlb tlq; do
  for cs in false:512 false:1024 true:512; do
    c=${cs%:*}; s=${cs#*:}
    FLASHCUTE_TIMELINE_OUT=$O/r/timeline-$v-$c-$s.bin timeout 60 $B/$v/flashcute bench --backend sm90 --dtype bf16 --d 128 \
      --seqlen $s --causal $c --pass fwd --warmup 20 --iters 30 --no-flush --fwd-workspace zeroed > $O/r/timeline-$v-$c-$s.txt 2>&1
    echo "timeline $v causal=$c $s rc=$?: $(grep -i tflop $O/r/timeline-$v-$c-$s.txt | head -1 | cut -c1-150)"
    python3 bench/tile_timeline.py $O/r/timeline-$v-$c-$s.bin --label "$v causal=$c $s" --md $O/r/timeline.md > /dev/null
    gzip -9 $O/r/timeline-$v-$c-$s.bin
  done
done
cat $O/r/timeline.md | head -120
t0=$SECONDS
timeout 300 python3 bench/ab_steady.py --bin-dir $B --variants base --peer sdpa_cudnn \
  --case 128:no:4096 --case 128:no:8192 --case 128:yes:8192 --case 64:no:8192 \
  --iters 3000 --rounds 2 --out $O/r/ab-power.md > $O/r/ab-power.log 2>&1
echo "ab rc=$? ($((SECONDS - t0)) s)"; tail -6 $O/r/ab-power.md
cd $O && tar czf r.tgz r && rm -rf r
