#!/usr/bin/env bash
# Session 30, call 1: d 64 with ping-pong among its three consumer warpgroups (round-robin turns) and
# among the short rows' four (`pp`: FLASHCUTE_SM90_FWD_D64_PINGPONG=1, _SHORT_PINGPONG=1, and masked
# problems on the row's overlapped 128-key kernel: _BLOCK_N_MASKED=0) against main's kernels
# (`base`: c218195). bf16 CLI builds made on the CPU machine (build/ab30, carried; pp d 64 only);
# fp64 checks, then ab_steady.
O=${OUT:-gpu-out}; mkdir -p $O/r
S=bench/results/2026-11-27-h100-session23
for v in pp; do DIMS=64 timeout 60 bash $S/checks.sh build/ab30/$v/flashcute > $O/r/checks-$v.txt 2>&1; echo "checks $v rc=$?"; done
run() { b=$1; shift; out=$(timeout 60 build/ab30/$b/flashcute run --dtype bf16 --d 64 --backend sm90 --check-heads 2 --iters 5 "$@" 2>&1); echo "rc=$? $b $* :: $(echo "$out" | grep -i -E 'max|check|repeat' | tr '\n' ' ' | cut -c1-300)"; }
{ for b in pp; do
    run $b --batch 32 --heads 32 --seqlen 512 --fwd-workspace zeroed
    run $b --batch 16 --heads 32 --seqlen 1024 --fwd-workspace no
    run $b --batch 4 --heads 32 --seqlen 4096 --fwd-workspace zeroed
    run $b --batch 2 --heads 32 --seqlen 4096 --causal --fwd-workspace zeroed
    run $b --batch 8 --heads 32 --seqlen 2048 --causal --fwd-workspace no
    run $b --batch 3 --heads 7 --seqlen 1000 --causal --fwd-workspace zeroed
    run $b --batch 5 --heads 16 --heads-kv 4 --seqlen 700 --causal --fwd-workspace yes
    run $b --batch 3 --heads 5 --seqlen 2000 --window-left 300 --window-right 20 --fwd-workspace zeroed
    run $b --batch 2 --heads 8 --seqlen-q 1500 --seqlen-k 3100 --fwd-workspace no
  done; } > $O/r/checks-shapes.txt 2>&1
grep -c '^rc=0' $O/r/checks-*.txt; grep -h '^rc=' $O/r/checks-*.txt | grep -v '^rc=0' | cut -c1-250 | head
for v in base pp; do echo "--fwd-workspace zeroed" > build/ab30/$v/args; done
timeout 420 python3 bench/ab_steady.py --bin-dir build/ab30 --variants base,pp \
  --case 64:no:512 --case 64:no:1024 --case 64:no:2048 --case 64:no:4096 --case 64:no:8192 --case 64:no:16384 \
  --case 64:yes:2048 --case 64:yes:4096 --case 64:yes:8192 --case 64:yes:16384 \
  --iters 1000 --rounds 2 --out $O/r/ab-pp.md > $O/r/ab-pp.log 2>&1
echo "ab rc=$?"; tail -12 $O/r/ab-pp.md
tar czf $O/r.tgz -C $O r
