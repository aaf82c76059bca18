#!/usr/bin/env bash
# Session 52, call 1 (H200): which pipe runs F2FP (xu_micro, plain and under ncu's pipe counters);
# the pipes of main's d 64 non-causal 8k kernel (pm64) and of P packed on the integer pipe (pa1);
# fp64 checks of pa1; ab_steady pa1 against pm64 with cuDNN at d 64 non-causal 2k-16k (the overlapped kernels; the masked plain-loop kernel keeps F2FP).
O=${OUT:-gpu-out}; mkdir -p $O/r
tar xJf build/vbin.tar.xz -C build
source bench/device_lib.sh
B=build/vbin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
bins pm64 pa1 > $O/r/bins.txt
pack() { sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*.md $O/r/*.log $O/r/*.txt $O/r/*.csv 2>/dev/null; tar czf $O/r.tgz -C $O r; }
PIPE="--metrics regex:^sm__(pipe|inst_executed_pipe)_.*avg.pct_of_peak_sustained_active$,sm__inst_issued.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed"
$B/xu_micro > $O/r/xu_micro.txt 2>&1; cat $O/r/xu_micro.txt
timeout 60 ncu $PIPE --csv --page details $B/xu_micro > $O/r/ncu-xu_micro.csv 2> $O/r/ncu-xu.err; echo "ncu micro rc=$?"
for v in pm64 pa1; do
  timeout 60 ncu --kernel-name regex:fwd_kernel --launch-skip 1 --launch-count 1 $PIPE --csv --page details \
    $B/$v/flashcute bench --dtype bf16 --d 64 --seqlen 8192 --causal false --pass fwd --backend sm90 --fwd-workspace zeroed \
    --warmup 1 --iters 1 --no-flush > $O/r/ncu-pipes-$v-d64-8k.csv 2>> $O/r/ncu-ours.err
  echo "ncu $v rc=$?"
done
pack
V=pa1
chk_std 64 > $O/r/checks-$V.txt
chk 64 "--seqlen 8192 --batch 1 --heads 8" "--seqlen 4096 --scale 30 --fwd-workspace yes" "--seqlen 3000 --scale 5" \
  "--seqlen 8192 --causal --batch 1 --heads 8" "--seqlen 4000 --heads-kv 1" >> $O/r/checks-$V.txt
tally $O/r/checks-$V.txt
pack
echo "checks done at $SECONDS s"
for spec in no:8192:300 no:4096:600 no:2048:1200 no:16384:160; do
  IFS=: read -r c s n <<< "$spec"; t0=$SECONDS
  timeout 75 python3 bench/ab_steady.py --bin-dir $B --variants pm64,pa1 --peer sdpa_cudnn --case 64:$c:$s \
    --iters $n --rounds 3 --dtype bf16 --out $O/r/ab64-$c$s.md > $O/r/ab64-$c$s.log 2>&1
  echo "ab d64 causal=$c $s rc=$? ($((SECONDS - t0)) s)"; grep "^| 64" $O/r/ab64-$c$s.md
  pack
  [ $SECONDS -gt 480 ] && break
done
pack && rm -rf $O/r
