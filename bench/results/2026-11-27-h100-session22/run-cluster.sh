#!/usr/bin/env bash
# One device call: fp64 checks, sanitizers and ncu kernel names on the cluster binary, then the A/B.
R=bench/results/2026-11-27-h100-session22
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $OUT/gpu.txt 2>&1
timeout 200 bash $R/checks-cluster.sh ab-bin/cl/flashcute > $OUT/checks-cl.txt 2>&1; echo "checks rc=$?" | tee -a $OUT/checks-cl.txt
for d in 128 256; do
  for tool in racecheck synccheck memcheck; do
    timeout 60 compute-sanitizer --tool $tool ab-bin/cl/flashcute run --backend sm90 --dtype bf16 --d $d --batch 1 --heads 2 \
      --seqlen-q 256 --seqlen-k 1280 --fwd-workspace no --check-heads 1 --iters 1 > $OUT/san-$tool-d$d.txt 2>&1
    echo "d$d $tool rc=$? $(tail -1 $OUT/san-$tool-d$d.txt)" >> $OUT/sanitizers.txt
  done
done
timeout 60 ncu --metrics gpu__time_duration.sum ab-bin/cl/flashcute bench --backend sm90 --dtype bf16 --d 128 --causal false \
  --seqlen 8192 --pass fwd --warmup 1 --iters 2 --no-flush > $OUT/ncu-names-cl.txt 2>&1 || true
timeout 60 ncu --metrics gpu__time_duration.sum ab-bin/base/flashcute bench --backend sm90 --dtype bf16 --d 128 --causal false \
  --seqlen 8192 --pass fwd --warmup 1 --iters 2 --no-flush > $OUT/ncu-names-base.txt 2>&1 || true
grep -c "rc=0" $OUT/checks-cl.txt; cat $OUT/sanitizers.txt
if grep -q "checks rc=0" $OUT/checks-cl.txt; then
  timeout 300 python3 bench/ab_steady.py --bin-dir ab-bin --variants base,cl,base_nows,cl_nows --case 128:no:8192 --case 128:no:16384 \
    --case 256:no:8192 --case 256:no:16384 --case 128:no:2048 --case 128:no:4096 --iters 1500 --rounds 2 --peer sdpa_cudnn --out $OUT/ab-cluster.md > $OUT/ab-cluster.log 2>&1
  tail -40 $OUT/ab-cluster.md
fi
