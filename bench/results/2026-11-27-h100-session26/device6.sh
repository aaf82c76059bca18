#!/usr/bin/env bash
# Session 26, call 6: ncu source-page stall samples of the landed d 128 kernel (local max check; the
# `lmc` CLI build of 49e8665) at non-causal 8k (one CTA per tile) and 512 (persistent), one launch each.
O=${OUT:-gpu-out}; mkdir -p $O
for s in 8192 512; do
  timeout 80 ncu --kernel-name regex:fwd_kernel --launch-skip 1 --launch-count 1 --section SourceCounters --section WarpStateStats --section SpeedOfLight \
    --page source --print-source sass --csv build/lmc/apps/flashcute bench --dtype bf16 --d 128 --seqlen $s --causal false --pass fwd \
    --backend sm90 --warmup 1 --iters 1 --no-flush > $O/ncu-src-lmc-d128-$s.csv 2> $O/ncu-src-$s.err
  echo "ncu $s rc=$? $(wc -c < $O/ncu-src-lmc-d128-$s.csv) bytes"; tail -2 $O/ncu-src-$s.err
done
cd $O && tar czf ncu-src.tgz ncu-src-lmc-d128-*.csv && rm -f ncu-src-lmc-d128-*.csv; ls -la
