#!/usr/bin/env bash
# Session 36, call 4 (H200): CLI builds made on the CPU machine (d 64, sm_90a), in build/ab36bin:
#   f16base / f16mir   fp16, WG_Q=0 / WG_Q=2 (the new default): ab_steady beside cuDNN, causal 512 and 1k
#   tl0 / tl2          bf16 probe builds (FLASHCUTE_SM90_FWD_TIMELINE=1), WG_Q=0 / 2: the tile
#                      timeline of all four consumer warpgroups at causal 512 and 1k (ab_steady's shapes)
# plus an fp64 check of the fp16 build of WG_Q=2 on the short tiles' shapes.
O=${OUT:-gpu-out}; mkdir -p $O/r
B=build/ab36bin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
for v in f16base f16mir tl0 tl2; do echo "$v $(md5sum < $B/$v/flashcute | cut -c1-12) $($B/$v/flashcute info 2>&1 | grep -o "dtypes=[a-z0-9,;]*" | head -1)"; done | tee $O/r/binaries.txt
for v in f16base f16mir; do echo "--fwd-workspace zeroed" > $B/$v/args; done
for s in 300 512 700 1000 1024; do
  for ws in yes no; do
    out=$(timeout 60 $B/f16mir/flashcute run --backend sm90 --dtype fp16 --d 64 --batch 8 --heads 32 --seqlen $s --causal --check-heads 40 --iters 2 --fwd-workspace $ws 2>&1)
    echo "rc=$? fp16 causal s=$s ws=$ws :: $(echo "$out" | grep -i -E 'max|err|check' | tr '\n' ' ' | cut -c1-200)"
  done
done > $O/r/checks-f16mir.txt 2>&1
echo "checks f16mir: $(grep -c '^rc=0' $O/r/checks-f16mir.txt) pass, $(grep -vc '^rc=0' $O/r/checks-f16mir.txt) not"
for v in tl0 tl2; do
  for s in 512 1024; do
    FLASHCUTE_TIMELINE_OUT=$O/r/timeline-$v-$s.bin timeout 60 $B/$v/flashcute bench --backend sm90 --dtype bf16 --d 64 \
      --seqlen $s --causal true --pass fwd --warmup 20 --iters 30 --no-flush --fwd-workspace zeroed > $O/r/timeline-$v-$s.txt 2>&1
    echo "timeline $v $s rc=$?: $(grep -i tflop $O/r/timeline-$v-$s.txt | head -1 | cut -c1-150)"
    python3 bench/tile_timeline.py $O/r/timeline-$v-$s.bin --label "$v causal $s" --md $O/r/timeline.md > /dev/null
  done
done
t0=$SECONDS
timeout 200 python3 bench/ab_steady.py --bin-dir $B --variants f16base,f16mir --peer sdpa_cudnn --dtype fp16 \
  --case 64:yes:512 --case 64:yes:1024 --iters 600 --rounds 2 --out $O/r/ab-f16.md > $O/r/ab-f16.log 2>&1
echo "ab rc=$? ($((SECONDS - t0)) s)"; tail -3 $O/r/ab-f16.md
cd $O && tar czf r.tgz r && rm -rf r
