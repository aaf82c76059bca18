#!/usr/bin/env bash
# Session 71, call 2: why Q in registers did not pay: ncu sections of one launch of base and qr2 at
# d 128 bf16 non-causal 16k (the non-persistent kernel, 0.983 at the locked clock) and 8k (the
# persistent dynamic one, 1.008), at the locked clock.
source bench/device_lib.sh
call_setup
for s in 16384 8192; do
  for V in base qr2; do
    timeout $(left 120) ncu --clock-control base --kernel-name regex:fwd_kernel --launch-skip 2 --launch-count 1 \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats \
      --section InstructionStats --metrics smsp__inst_executed_pipe_uniform.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__sass_inst_executed_op_shared_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum \
      $B/$V/flashcute bench --backend sm90 --pass fwd --dtype bf16 --d 128 --seqlen $s --causal false --warmup 2 --iters 1 --fwd-workspace zeroed \
      > $O/r/ncu-$V-nc$s.txt 2>&1
    echo "$V $s rc=$? at $SECONDS s"
  done
done
pack && rm -rf $O/r
