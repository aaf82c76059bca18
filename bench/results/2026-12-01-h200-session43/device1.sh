#!/usr/bin/env bash
# Session 43, call 1 (H200): CLI builds made on the CPU machine, carried gzipped in .abcarry/:
# grid (main's kernels: sm_90a, bf16 + fp16, d 64 / 128 / 256) and fbase (bf16 d 128 with
# -DFLASHCUTE_SM90_FWD_FORCE_RECOMPUTE=1: every speculative step recomputes S, so the recompute that
# large logits need runs on every block). fp64 checks of fbase, then the steady-state grid: every
# issue-7 row, ours (grid) against cuDNN, alternated, 500 launches per phase, 2 rounds, one
# ab_steady run per (dtype, d) so that a timeout loses one part only.
O=${OUT:-gpu-out}; mkdir -p $O/r
source bench/device_lib.sh
B=build/abbin
for v in grid fbase; do mkdir -p $B/$v && gunzip -c .abcarry/$v.gz > $B/$v/flashcute && chmod +x $B/$v/flashcute; done
bins grid fbase > $O/r/bins.txt; cat $O/r/bins.txt
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt; cat $O/r/gpu.txt
t0=$SECONDS
V=fbase
{ chk 128 "--seqlen 5000" "--seqlen 6000 --causal" "--seqlen 1000 --causal --fwd-workspace no" "--seqlen 512 --fwd-workspace yes" \
    "--seqlen 2000 --scale 30 --fwd-workspace yes" "--seqlen 5000 --scale 30" "--seqlen 6000 --causal --scale 30" \
    "--seqlen 3000 --causal --scale 2 --fwd-workspace yes" "--seqlen-q 700 --seqlen-k 5000 --causal --scale 30" \
    "--seqlen 1024 --heads-kv 4 --fwd-workspace yes" "--seqlen 800 --window-left 100 --window-right 50 --fwd-workspace yes"
} > $O/r/checks.txt 2>&1
tally $O/r/checks.txt; echo "checks $((SECONDS - t0)) s"
# The dense GEMM ceiling on this GPU at its power cap: torch.matmul 8192^3, 300 back-to-back launches.
python3 - > $O/r/gemm.txt 2>&1 <<'PY'
import torch
for dt in (torch.bfloat16, torch.float16):
    a = torch.randn(8192, 8192, device="cuda", dtype=dt); b = torch.randn(8192, 8192, device="cuda", dtype=dt)
    for _ in range(30): a @ b
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(300): a @ b
    e.record(); torch.cuda.synchronize()
    ms = s.elapsed_time(e) / 300
    print(f"{dt} 8192^3 matmul: {ms:.3f} ms, {2 * 8192**3 / ms / 1e9:.1f} TFLOP/s")
PY
cat $O/r/gemm.txt
pack() { sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*.md $O/r/*.txt $O/r/*.log 2>/dev/null; tar czf $O/r.tgz -C $O r; }
pack
for dt in bf16 fp16; do for d in 128 64 256; do
  [ $SECONDS -gt 470 ] && { echo "skip $dt d$d (time)"; continue; }
  t0=$SECONDS
  C=(); for c in no yes; do for s in 512 1024 2048 4096 8192 16384; do C+=(--case $d:$c:$s); done; done
  timeout 100 python3 bench/ab_steady.py --bin-dir $B --variants grid --peer sdpa_cudnn "${C[@]}" --iters 500 --rounds 2 \
    --dtype $dt --out $O/r/steady-$dt-d$d.md --records $O/r/steady-$dt-d$d > $O/r/steady-$dt-d$d.log 2>&1
  echo "steady $dt d$d rc=$? ($((SECONDS - t0)) s)"
  pack
done; done
ls $O/r/*round*.json 2>/dev/null | wc -l
pack && rm -rf $O/r
