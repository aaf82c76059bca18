#!/usr/bin/env bash
# Session 44, call 4: the 512 and 1k rows at long phases (5000 / 2500 launches, where calls 1 and session
# 43's grid ran 500: 0.06-0.25 s of GPU work, short of the power cap), ours against cuDNN, 2 rounds.
# d 64 and d 256 with session 43's grid build (main's kernels; this session changed none at those head
# dims), d 128 non-causal with call 1's half build (the landed d 128 kernels).
O=${OUT:-gpu-out}; mkdir -p $O/r
B=build/abbin
for v in grid half; do mkdir -p $B/$v && gunzip -c .abcarry/$v.gz > $B/$v/flashcute && chmod +x $B/$v/flashcute; echo "--fwd-workspace zeroed" > $B/$v/args; done
pack() { sed -i "s#$PWD#<repo>#g; s#$O#\$OUT#g" $O/r/*.md $O/r/*.log 2>/dev/null; tar czf $O/r.tgz -C $O r; }
run() {  # run NAME VARIANT ITERS DTYPE CASES...
  local name=$1 v=$2 n=$3 dt=$4; shift 4
  [ $SECONDS -gt 430 ] && { echo "skip $name (time)"; return; }
  local t0=$SECONDS C=(); for c in "$@"; do C+=(--case $c); done
  timeout 150 python3 bench/ab_steady.py --bin-dir $B --variants $v --peer sdpa_cudnn "${C[@]}" --iters $n --rounds 2 \
    --dtype $dt --out $O/r/$name.md --records $O/r/$name > $O/r/$name.log 2>&1
  echo "$name rc=$? ($((SECONDS - t0)) s)"; grep "^| " $O/r/$name.md | tail -n +3
  pack
}
for dt in bf16 fp16; do
  run short-$dt-512 grid 5000 $dt 256:no:512 256:yes:512 64:no:512 64:yes:512
  run short-$dt-1024 grid 2500 $dt 256:no:1024 256:yes:1024 64:no:1024 64:yes:1024
done
for dt in bf16 fp16; do
  run short-$dt-d128-512 half 5000 $dt 128:no:512
  run short-$dt-d128-1024 half 2500 $dt 128:no:1024
done
pack && rm -rf $O/r
