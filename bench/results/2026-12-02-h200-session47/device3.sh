#!/usr/bin/env bash
# Session 47, call 3 (H200): d 256's masked short tiles with one release per warpgroup (this tree's
# default, cur256 / cur256h) against main's (base256 / base256h, a build of main's head), ab_steady
# with cuDNN, fp16 and bf16 (CLI builds from the CPU machine).
O=${OUT:-gpu-out}; mkdir -p $O/r
source bench/device_lib.sh
B=build/vbin3
bins base256 cur256 base256h cur256h > $O/r/bins.txt
pack() { sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*.md $O/r/*.log $O/r/*.txt 2>/dev/null; tar czf $O/r.tgz -C $O r; }
for spec in fp16:base256h,cur256h bf16:base256,cur256; do
  dt=${spec%%:*}; vs=${spec#*:}
  for ci in yes:512:5000 yes:1024:2500 no:512:5000; do
    c=${ci%%:*}; r=${ci#*:}; s=${r%:*}; n=${r#*:}; t0=$SECONDS
    [ $SECONDS -gt 300 ] && { echo "skip $dt $ci (time)"; continue; }
    timeout 100 python3 bench/ab_steady.py --bin-dir $B --variants $vs --peer sdpa_cudnn --case 256:$c:$s \
      --iters $n --rounds 3 --dtype $dt --out $O/r/ab256-$dt-$c$s.md > $O/r/ab256-$dt-$c$s.log 2>&1
    echo "ab $dt d256 causal=$c $s rc=$? ($((SECONDS - t0)) s)"; grep "^| 256" $O/r/ab256-$dt-$c$s.md
    pack
  done
done
pack && rm -rf $O/r
