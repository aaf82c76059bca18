#!/usr/bin/env bash
# Call 2: ncu memory/compute sections of the SM90 forward (one launch each): is shared memory's
# bandwidth near its peak (wgmma operand reads + TMA writes)?
B=build/cli/apps/flashcute
for c in "128 8192 false" "128 512 false" "256 8192 false" "128 8192 true"; do
  set -- $c
  timeout 150 ncu --kernel-name regex:fwd_kernel --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
    --section ComputeWorkloadAnalysis --section Occupancy \
    --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed \
    $B bench --dtype bf16 --d $1 --seqlen $2 --causal $3 --pass fwd --backend sm90 --warmup 1 --iters 2 --no-flush \
    > $OUT/ncu-d$1-$2-causal-$3.txt 2>&1
done
tar czf $OUT/ncu.tgz -C $OUT . 2>/dev/null; ls -la $OUT
