#!/usr/bin/env bash
# Session 44, call 2 (call 1's machine and binaries): ab_steady of base and half against cuDNN on d 128's
# causal 512 / 1k / 2k rows with longer phases than call 1's (500 launches were 0.06-0.25 s of GPU work
# at these rows): 5000 / 2500 / 1200 launches, 4 rounds, bf16 and fp16.
O=${OUT:-gpu-out}; mkdir -p $O/r
B=build/abbin
for v in base half; do [ -x $B/$v/flashcute ] || { mkdir -p $B/$v && gunzip -c .abcarry/$v.gz > $B/$v/flashcute && chmod +x $B/$v/flashcute; echo "--fwd-workspace zeroed" > $B/$v/args; }; done
pack() { sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*.md $O/r/*.log 2>/dev/null; tar czf $O/r.tgz -C $O r; }
for dt in bf16 fp16; do for ci in 512:5000 1024:2500 2048:1200; do
  s=${ci%:*}; n=${ci#*:}
  [ $SECONDS -gt 500 ] && { echo "skip $dt $s (time)"; continue; }
  t0=$SECONDS
  timeout 120 python3 bench/ab_steady.py --bin-dir $B --variants base,half --peer sdpa_cudnn --case 128:yes:$s \
    --iters $n --rounds 4 --dtype $dt --out $O/r/ab-$dt-c$s.md > $O/r/ab-$dt-c$s.log 2>&1
  echo "ab $dt causal $s rc=$? ($((SECONDS - t0)) s)"; grep "^| 128" $O/r/ab-$dt-c$s.md
  pack
done; done
pack && rm -rf $O/r
