#!/usr/bin/env bash
# Session 68, call 4 (the same warm H100; run as one command line, written out here): ncu's
# SourceCounters (executed instructions per SASS line) of the forward kernel's first launch at 8k, to
# check sass-census.md's static count against what runs. ncu_census.py (beside this) sums the CSVs.
source bench/device_lib.sh; call_setup; B=build/vbin/main68/flashcute
N=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1); mkdir -p $O/n
go() {
  tag=$1; shift
  timeout 40 $N --clock-control none --kernel-name-base mangled --kernel-name regex:sm9010fwd_kernel --launch-count 1 \
    --section SourceCounters --import-source no -f -o /tmp/$tag $B run --backend sm90 --dtype bf16 --batch 1 --heads 16 \
    --iters 1 --check-heads 0 "$@" > $O/n/$tag.log 2>&1
  echo "$tag rc=$? $SECONDS"
  $N -i /tmp/$tag.ncu-rep --page source --print-source sass --csv > $O/n/$tag.csv 2>>$O/n/err.txt
}
go d64nc8k --d 64 --seqlen 8192; go d64c8k --d 64 --seqlen 8192 --causal; go d128nc8k --d 128 --seqlen 8192
go d128nc8kNoWs --d 128 --seqlen 8192 --fwd-workspace no; go d128c8k --d 128 --seqlen 8192 --causal
tar czf $O/ncu.tgz -C $O n; rm -rf $O/n $O/r
