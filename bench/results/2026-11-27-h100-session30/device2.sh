#!/usr/bin/env bash
# Session 30, call 2: (1) the fast tile decode in d 64's and d 256's persistent kernels (`fdx`:
# FLASHCUTE_SM90_FWD_FAST_DECODE=1, D64_PINGPONG=0; bf16 d 64 + d 256) against main's kernels of
# c218195 (`base`); (2) d 128 with the two session-27 review leftovers (`rv`: TileWork::unmasked for
# both mask tests, and the softmax's "nothing moved" return skipping the rescale vote; bf16 d 128)
# against the same base. CLI builds made on the CPU machine (build/ab30, carried); fp64 checks,
# then ab_steady (2000 launches, 2 rounds, zeroed workspace).
O=${OUT:-gpu-out}; mkdir -p $O/r
S=bench/results/2026-11-27-h100-session23
DIMS="64 256" timeout 80 bash $S/checks.sh build/ab30/fdx/flashcute > $O/r/checks-fdx.txt 2>&1; echo "checks fdx rc=$?"
DIMS=128 timeout 60 bash $S/checks.sh build/ab30/rv/flashcute > $O/r/checks-rv.txt 2>&1; echo "checks rv rc=$?"
run() { b=$1; d=$2; shift 2; out=$(timeout 60 build/ab30/$b/flashcute run --dtype bf16 --d $d --backend sm90 --check-heads 2 --iters 5 "$@" 2>&1); echo "rc=$? $b d$d $* :: $(echo "$out" | grep -i -E 'max|check|repeat' | tr '\n' ' ' | cut -c1-300)"; }
{ for d in 64 256; do
    run fdx $d --batch 32 --heads 16 --seqlen 512 --fwd-workspace zeroed
    run fdx $d --batch 3 --heads 7 --seqlen 1000 --causal --fwd-workspace zeroed
    run fdx $d --batch 5 --heads 16 --heads-kv 4 --seqlen 700 --causal --fwd-workspace yes
    run fdx $d --batch 3 --heads 5 --seqlen 2000 --window-left 300 --window-right 20 --fwd-workspace zeroed
    run fdx $d --batch 2 --heads 8 --seqlen-q 1500 --seqlen-k 3100 --fwd-workspace zeroed
  done
  run rv 128 --batch 4 --heads 16 --seqlen 4096 --fwd-workspace zeroed
  run rv 128 --batch 2 --heads 16 --seqlen 8192 --causal --fwd-workspace no
  run rv 128 --batch 3 --heads 5 --seqlen 2000 --window-left 300 --window-right 20 --fwd-workspace zeroed
  run rv 128 --batch 8 --heads 16 --seqlen 1024 --causal --fwd-workspace zeroed
  run rv 128 --batch 2 --heads 8 --seqlen 3000 --softcap 30 --fwd-workspace yes; } > $O/r/checks-shapes.txt 2>&1
grep -c '^rc=0' $O/r/checks-*.txt; grep -h '^rc=' $O/r/checks-*.txt | grep -v '^rc=0' | cut -c1-250 | head
for v in base fdx rv; do echo "--fwd-workspace zeroed" > build/ab30/$v/args; done
timeout 300 python3 bench/ab_steady.py --bin-dir build/ab30 --variants base,fdx \
  --case 64:no:512 --case 64:yes:512 --case 64:no:1024 --case 64:yes:1024 --case 64:no:2048 --case 64:yes:2048 \
  --case 256:no:512 --case 256:yes:512 --case 256:no:1024 --case 256:yes:1024 --case 256:no:2048 --case 256:yes:2048 \
  --case 256:no:4096 --case 256:yes:4096 --iters 2000 --rounds 2 --out $O/r/ab-fdx.md > $O/r/ab-fdx.log 2>&1
echo "ab fdx rc=$?"; tail -15 $O/r/ab-fdx.md
timeout 200 python3 bench/ab_steady.py --bin-dir build/ab30 --variants base,rv \
  --case 128:no:512 --case 128:yes:512 --case 128:no:1024 --case 128:yes:1024 --case 128:no:2048 --case 128:yes:2048 \
  --case 128:no:8192 --case 128:yes:8192 --iters 2000 --rounds 2 --out $O/r/ab-rv.md > $O/r/ab-rv.log 2>&1
echo "ab rv rc=$?"; tail -9 $O/r/ab-rv.md
tar czf $O/r.tgz -C $O r
