#!/usr/bin/env bash
# Session 46, call 3 (H200): CLI builds made on the CPU machine (sm_90a, bf16), in build/vbin:
#   base   main's kernels (057e098), d 64 / 128 / 256: compute-sanitizer on every SM90 kernel family
#   tl64   the timeline probe (FLASHCUTE_SM90_FWD_TIMELINE=1), d 64: the 256 x 64 tiles at causal 512 / 1k
# and ncu's pipe utilization and warp states of ours and of cuDNN (SDPA) on d 64 causal 512, with
# cuDNN's launch shape on the rows below its targets.
O=${OUT:-gpu-out}; mkdir -p $O/r
source bench/device_lib.sh
B=build/vbin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
bins base tl64 > $O/r/bins.txt; cat $O/r/bins.txt
# 1. Sanitizers on main's kernels: d 64 short / masked / row kernels, d 128 persistent / dynamic,
#    d 256 short masked / cluster, with and without a workspace.
V=base
for tool in memcheck synccheck initcheck racecheck; do
  san $tool 64 --batch 2 --heads 8 --seqlen 700 --causal --fwd-workspace yes
  san $tool 64 --batch 2 --heads 8 --seqlen 2100 --fwd-workspace no
  san $tool 128 --batch 2 --heads 8 --seqlen 700 --causal --fwd-workspace yes
  san $tool 128 --batch 1 --heads 8 --seqlen 3000 --fwd-workspace yes
  san $tool 256 --batch 2 --heads 4 --seqlen 700 --causal --fwd-workspace yes
  san $tool 256 --batch 1 --heads 4 --seqlen 4100 --fwd-workspace yes
done > $O/r/sanitizer.txt 2>&1
tally $O/r/sanitizer.txt
# 2. The timeline of d 64's short tiles (ab_steady's shapes).
for s in 512 1024; do
  FLASHCUTE_TIMELINE_OUT=$O/r/timeline-$s.bin timeout 60 $B/tl64/flashcute bench --backend sm90 --dtype bf16 --d 64 \
    --seqlen $s --causal true --pass fwd --warmup 20 --iters 30 --no-flush --fwd-workspace zeroed > $O/r/timeline-$s.txt 2>&1
  echo "timeline $s rc=$?: $(grep -i tflop $O/r/timeline-$s.txt | head -1 | cut -c1-150)"
  python3 bench/tile_timeline.py $O/r/timeline-$s.bin --label "tl64 causal $s" --md $O/r/timeline.md > /dev/null
  gzip -f $O/r/timeline-$s.bin
done
# 3. ncu: ours and cuDNN, d 64 causal 512 (pipes, warp states, launch shape).
set -f  # $SEC holds a metric regex
SEC="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis"
PIPE="--metrics regex:^sm__(pipe|inst_executed_pipe)_.*avg.pct_of_peak_sustained_active$"
t0=$SECONDS
timeout 90 ncu --kernel-name regex:fwd_kernel --launch-skip 1 --launch-count 1 $SEC --csv --page details \
  $B/base/flashcute bench --dtype bf16 --d 64 --seqlen 512 --causal true --pass fwd --backend sm90 --fwd-workspace zeroed \
  --warmup 1 --iters 1 --no-flush > $O/r/ncu-ours-d64-c512.csv 2> $O/r/ncu-ours.err
echo "ncu ours rc=$? ($((SECONDS - t0)) s)"
R=bench/results/2026-12-02-h200-session46/cudnn_run.py
timeout 60 python3 $R --d 64 --seqlen 512 --causal --names 2>&1 | grep kernel: | tee $O/r/cudnn-kernels.txt
t0=$SECONDS
timeout 90 ncu --kernel-name regex:'.*(sdpa|fprop|fmha|flash|attn|cudnn).*' --launch-skip 1 --launch-count 1 $SEC --csv --page details \
  python3 $R --d 64 --seqlen 512 --causal > $O/r/ncu-cudnn-d64-c512.csv 2> $O/r/ncu-cudnn.err
echo "ncu cudnn rc=$? ($((SECONDS - t0)) s)"
timeout 60 ncu --kernel-name regex:fwd_kernel --launch-skip 1 --launch-count 1 $PIPE --csv --page details \
  $B/base/flashcute bench --dtype bf16 --d 64 --seqlen 512 --causal true --pass fwd --backend sm90 --fwd-workspace zeroed \
  --warmup 1 --iters 1 --no-flush > $O/r/ncu-pipes-ours-d64-c512.csv 2>> $O/r/ncu-ours.err
echo "ncu pipes ours rc=$?"
timeout 60 ncu --kernel-name regex:'.*(sdpa|fprop|fmha|flash|attn|cudnn).*' --launch-skip 1 --launch-count 1 $PIPE --csv --page details \
  python3 $R --d 64 --seqlen 512 --causal > $O/r/ncu-pipes-cudnn-d64-c512.csv 2>> $O/r/ncu-cudnn.err
echo "ncu pipes cudnn rc=$?"
# cuDNN's launch shape on other rows below target (LaunchStats only).
for row in "128 512 --causal" "128 1024" "256 512 --causal" "256 1024 --causal" "64 1024 --causal"; do
  set -- $row
  timeout 40 ncu --kernel-name regex:'.*(sdpa|fprop|fmha|flash|attn|cudnn).*' --launch-skip 1 --launch-count 1 --section LaunchStats --csv --page details \
    python3 $R --d $1 --seqlen $2 $3 > $O/r/ncu-cudnn-launch-d$1-$2${3:+-c}.csv 2>/dev/null
  echo "launch d$1 $2 $3 rc=$?"
done
set +f
python3 - $O/r <<'PY'
import csv, glob, sys, os
for f in sorted(glob.glob(sys.argv[1] + "/ncu-*.csv")):
    rows = [r for r in csv.reader(l for l in open(f) if l.startswith('"'))]
    if not rows: print(os.path.basename(f), "no rows"); continue
    hdr = rows[0]; ix = {h: i for i, h in enumerate(hdr)}
    want = ("Grid Size", "Block Size", "Registers Per Thread", "Dynamic Shared Memory Per Block", "Duration",
            "Compute (SM) Throughput", "Memory Throughput", "DRAM Throughput", "Issue Slots Busy", "Executed Ipc Active",
            "Achieved Occupancy", "Warp Cycles Per Issued Instruction")
    name = rows[1][ix["Kernel Name"]][:90] if "Kernel Name" in ix and len(rows) > 1 else "?"
    vals = {}
    for r in rows[1:]:
        m = r[ix["Metric Name"]] if "Metric Name" in ix else ""
        if m in want or ("pipe" in m and r[ix["Metric Value"]] not in ("0", "0.00")):
            vals[m.replace(".avg.pct_of_peak_sustained_active", "%")] = r[ix["Metric Value"]] + " " + r[ix["Metric Unit"]]
    print(os.path.basename(f), "|", name, "|", "; ".join(f"{k}={v}" for k, v in vals.items()))
PY
cd $O && tar czf r.tgz r && rm -rf r
