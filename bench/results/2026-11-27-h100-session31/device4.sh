#!/usr/bin/env bash
# Session 31, call 4: d 256's persistent kernels writing O from registers to gmem and freeing Q's
# space after the last S = Q K^T (`dio`: FLASHCUTE_SM90_FWD_D256_DIRECT_O=1, bf16 d 256) against the
# same tree without it (`base`: call 1's `var` binary, d 256's masked short tiles on; both bf16).
# fp64 checks of dio first, then ab_steady (1000 launches, 2 rounds, zeroed workspace).
O=${OUT:-gpu-out}; mkdir -p $O/r
for v in base dio; do echo "--fwd-workspace zeroed" > build/ab33/$v/args; done
b=build/ab33/dio/flashcute; fail=0
run() { out=$(timeout 60 "$b" run --dtype ${DT:-bf16} --check-heads 3 --iters 3 "$@" 2>&1); rc=$?; echo "rc=$rc $* :: $(echo "$out" | grep -i -E 'max|err|check|TFLOP|support' | tr '\n' ' ' | cut -c1-300)"; [[ $rc == 0 ]] || fail=1; }
{
for ws in yes no zeroed; do
  run --backend sm90 --d 256 --batch 4 --heads 8 --seqlen 512 --causal --fwd-workspace $ws
  run --backend sm90 --d 256 --batch 2 --heads 8 --seqlen 1000 --causal --fwd-workspace $ws
  run --backend sm90 --d 256 --batch 4 --heads 8 --seqlen 512 --fwd-workspace $ws
  run --backend sm90 --d 256 --batch 2 --heads 8 --seqlen 2000 --fwd-workspace $ws
  run --backend sm90 --d 256 --batch 2 --heads 8 --seqlen 1000 --softcap 30 --fwd-workspace $ws
done
run --backend sm90 --d 256 --batch 2 --heads 8 --seqlen 4096 --causal --fwd-workspace yes
run --backend sm90 --d 256 --batch 3 --heads 8 --heads-kv 2 --seqlen-q 300 --seqlen-k 900 --causal
run --backend sm90 --d 256 --batch 3 --heads 8 --heads-kv 4 --seqlen-q 700 --seqlen-k 200 --causal --fwd-workspace yes
run --backend sm90 --d 256 --batch 2 --heads 8 --seqlen 1000 --window-left 100 --window-right 50 --fwd-workspace yes
run --backend sm90 --d 256 --batch 2 --heads 8 --seqlen-q 1 --seqlen-k 700 --causal --fwd-workspace yes
run --backend sm90 --d 256 --batch 2 --heads 8 --seqlen-q 77 --seqlen-k 3000 --fwd-workspace yes
run --backend sm90 --d 256 --dv 136 --batch 2 --heads 8 --seqlen 900 --causal --fwd-workspace yes
run --backend sm90 --d 200 --batch 2 --heads 8 --seqlen 600 --fwd-workspace yes
DT=fp16 run --backend sm90 --d 256 --batch 2 --heads 8 --seqlen 1000 --causal --fwd-workspace yes
DT=fp16 run --backend sm90 --d 256 --batch 2 --heads 8 --seqlen 1500 --fwd-workspace yes
} > $O/r/checks-dio.log 2>&1
echo "checks dio fail=$fail: $(grep -c '^rc=0' $O/r/checks-dio.log) pass"; grep -v "^rc=0" $O/r/checks-dio.log | head -5
t0=$SECONDS
for tool in racecheck synccheck; do for ws in no yes; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 $b run --backend sm90 --dtype bf16 --d 256 --batch 1 --heads 2 --seqlen 700 --causal --iters 1 --check-heads 1 --fwd-workspace $ws > san.txt 2>&1
  echo "rc=$? $tool causal 700 workspace=$ws :: $(grep -E 'SUMMARY|max\|out' san.txt | tr '\n' ' ' | cut -c1-200)"
done; done > $O/r/sanitizer-dio.txt 2>&1
echo "sanitizer ($((SECONDS - t0)) s)"; cat $O/r/sanitizer-dio.txt
timeout 240 python3 bench/ab_steady.py --bin-dir build/ab33 --variants base,dio \
  --case 256:yes:512 --case 256:yes:1024 --case 256:yes:2048 --case 256:yes:4096 --case 256:no:512 --case 256:no:2048 \
  --iters 1000 --rounds 2 --out $O/r/ab-dio.md > $O/r/ab-dio.log 2>&1
echo "ab rc=$?"; tail -8 $O/r/ab-dio.md
cd $O && tar czf r.tgz r && rm -rf r
