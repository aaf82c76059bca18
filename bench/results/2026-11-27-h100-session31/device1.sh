#!/usr/bin/env bash
# Session 31, call 1: the masked short tiles at d 256 and d 128 (block_n 64, each warpgroup on its own
# rows' key blocks) for causal problems, against the rows' kernels. `base`: this tree's kernels
# (switches off), `var`: FLASHCUTE_SM90_FWD_D256_SHORT_MASKED_MAX=4096, _D256_SHORT_FULL_MAX=1024 and
# _D128_SHORT_MASKED_MAX=4096 (every causal row up to 4k and d 256's non-causal rows up to 1k on the
# new kernel), `var4`: var with 4 K/V stages at d 128's. CLI builds
# made on the CPU machine (build/ab32), bf16 d 128 + d 256. fp64 checks first, then ab_steady
# (1000 launches, 2 rounds, zeroed workspace).
O=${OUT:-gpu-out}; mkdir -p $O/r
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
VARS=base,var; [[ -x build/ab32/var4/flashcute ]] && VARS=$VARS,var4
for v in ${VARS//,/ }; do echo "--fwd-workspace zeroed" > build/ab32/$v/args; done
ck() {  # fp64 checks of the causal short problems on one binary
  b=$1; fail=0
  run() { out=$(timeout 60 "$b" run --dtype bf16 --check-heads 3 --iters 3 "$@" 2>&1); rc=$?; echo "rc=$rc $* :: $(echo "$out" | grep -i -E 'max|err|check|TFLOP' | tr '\n' ' ' | cut -c1-300)"; [[ $rc == 0 ]] || fail=1; }
  for d in 128 256; do
    for ws in yes no zeroed; do
      run --backend sm90 --d $d --batch 4 --heads 8 --seqlen 512 --causal --fwd-workspace $ws
      run --backend sm90 --d $d --batch 2 --heads 8 --seqlen 1000 --causal --fwd-workspace $ws
    done
    run --backend sm90 --d $d --batch 2 --heads 8 --seqlen 4096 --causal --fwd-workspace yes
    run --backend sm90 --d $d --batch 2 --heads 8 --seqlen 3000 --causal --fwd-workspace no
    run --backend sm90 --d $d --batch 3 --heads 8 --heads-kv 2 --seqlen-q 300 --seqlen-k 900 --causal
    run --backend sm90 --d $d --batch 3 --heads 8 --seqlen-q 700 --seqlen-k 200 --causal
    run --backend sm90 --d $d --batch 2 --heads 8 --seqlen 1000 --window-left 100 --window-right 50
    run --backend sm90 --d $d --batch 2 --heads 8 --seqlen 777 --window-left 300 --window-right 0 --fwd-workspace no
    run --backend sm90 --d $d --batch 2 --heads 8 --seqlen-q 1 --seqlen-k 700 --causal
    run --backend sm90 --d $d --batch 4 --heads 8 --seqlen 512 --fwd-workspace yes
    run --backend sm90 --d $d --batch 4 --heads 8 --seqlen 512 --fwd-workspace no
    run --backend sm90 --d $d --batch 3 --heads 8 --heads-kv 4 --seqlen-q 300 --seqlen-k 1000
  done
  return $fail
}
for v in ${VARS//,/ }; do [[ $v == base ]] && continue; ck build/ab32/$v/flashcute > $O/r/checks-$v.log 2>&1; echo "checks $v rc=$?"; grep -c "^rc=0" $O/r/checks-$v.log; grep -v "^rc=0" $O/r/checks-$v.log | head -5; done
DIMS="128 256" bash bench/results/2026-11-27-h100-session23/checks.sh build/ab32/var/flashcute > $O/r/checks23-var.log 2>&1; echo "checks23 var rc=$?"
timeout 220 python3 bench/ab_steady.py --bin-dir build/ab32 --variants base,var \
  --case 256:yes:512 --case 256:yes:1024 --case 256:yes:2048 --case 256:yes:4096 --case 256:no:512 --case 256:no:1024 \
  --iters 1000 --rounds 2 --out $O/r/ab-d256.md > $O/r/ab-d256.log 2>&1
echo "ab d256 rc=$?"; tail -8 $O/r/ab-d256.md
timeout 220 python3 bench/ab_steady.py --bin-dir build/ab32 --variants $VARS \
  --case 128:yes:512 --case 128:yes:1024 --case 128:yes:2048 --case 128:no:512 \
  --iters 1000 --rounds 2 --out $O/r/ab-d128.md > $O/r/ab-d128.log 2>&1
echo "ab d128 rc=$?"; tail -6 $O/r/ab-d128.md
cd $O && tar czf r.tgz r && rm -rf r
