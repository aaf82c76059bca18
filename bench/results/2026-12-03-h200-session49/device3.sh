#!/usr/bin/env bash
# Session 49, call 5 (H200): the review's mend (the plain loop's one step, `plain_step`, with a
# narrower S fragment for the first block's parts): its bf16 d 64 + d 256 CLI build from the CPU
# machine (`rf`), whose SASS differs from the gpu-checked kernels' in register allocation only (same
# instructions per opcode; bench/sass_diff.py) in d 64's masked kernel and the softcap/ALiBi
# plain-loop kernels. fp64 checks and compute-sanitizer of those kernels.
O=${OUT:-gpu-out}; mkdir -p $O/r
tar xJf build/rf.tar.xz -C build
source bench/device_lib.sh
B=build/vbin; V=rf
bins rf > $O/r/bins.txt
chk_std 64 > $O/r/checks-rf.txt
chk 64 "--seqlen 1500 --causal --fwd-workspace yes" "--seqlen 4100 --causal --fwd-workspace no" \
  "--seqlen-q 1500 --seqlen-k 3000 --causal --fwd-workspace yes" "--seqlen-q 3000 --seqlen-k 1500 --causal --fwd-workspace yes" \
  "--seqlen 3000 --window-left 300 --window-right 100 --fwd-workspace yes" "--seqlen 2200 --causal --heads-kv 1 --fwd-workspace yes" \
  "--seqlen 2000 --causal --softcap 30 --fwd-workspace yes" "--seqlen 1000 --softcap 30 --fwd-workspace no" \
  "--seqlen 3000 --causal --softcap 20 --fwd-workspace no" >> $O/r/checks-rf.txt
chk 256 "--seqlen 800 --causal --softcap 30 --fwd-workspace yes" "--seqlen 1000 --softcap 30 --fwd-workspace no" \
  "--seqlen 512 --causal --fwd-workspace yes" "--seqlen 2000 --fwd-workspace yes" >> $O/r/checks-rf.txt
tally $O/r/checks-rf.txt
for tool in racecheck synccheck memcheck initcheck; do
  san $tool 64 --batch 2 --heads 8 --seqlen 3000 --causal --fwd-workspace yes >> $O/r/sanitizer-rf.txt
done
san racecheck 64 --batch 2 --heads 4 --seqlen 1000 --causal --softcap 30 --fwd-workspace yes >> $O/r/sanitizer-rf.txt
san racecheck 256 --batch 2 --heads 4 --seqlen 800 --causal --softcap 30 --fwd-workspace yes >> $O/r/sanitizer-rf.txt
tally $O/r/sanitizer-rf.txt
sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*.txt 2>/dev/null; tar czf $O/r.tgz -C $O r && rm -rf $O/r
