#!/usr/bin/env bash
# Session 29, call 8: the persistent kernel's tile index decoded with host-computed fast divisions
# (FLASHCUTE_SM90_FWD_FAST_DECODE=1: `fd`), and with the early Q release on top (`fdq`,
# FLASHCUTE_SM90_FWD_EARLY_Q=1), against this tree's kernels (`base`). bf16 d 128 CLI builds made
# here (16 cores), their probe builds (-DFLASHCUTE_SM90_FWD_TIMELINE=1) for the timeline; fp64 checks.
O=${OUT:-gpu-out}; mkdir -p $O/r
scripts/setup > /dev/null 2>&1; eval "$(scripts/setup --env)"
t0=$SECONDS
build() {  # build NAME FLAGS
  cmake -S . -B build/$1 -G Ninja -DFLASHCUTE_ARCHS=90a -DFLASHCUTE_DTYPES=bf16 -DFLASHCUTE_HEAD_DIMS=128 \
    -DFLASHCUTE_BUILD_TESTS=OFF -DFLASHCUTE_PTXAS_VERBOSE=ON "-DFLASHCUTE_SM90_FLAGS=$2" > $O/r/build-$1.log 2>&1 &&
    ninja -C build/$1 -j 4 flashcute_cli >> $O/r/build-$1.log 2>&1; echo "build $1 rc=$? ($((SECONDS - t0)) s)"
}
FD=-DFLASHCUTE_SM90_FWD_FAST_DECODE=1; EQ=-DFLASHCUTE_SM90_FWD_EARLY_Q=1; TL=-DFLASHCUTE_SM90_FWD_TIMELINE=1
build base "" & build fd "$FD" & build fdq "$FD;$EQ" & build probe-fd "$FD;$TL" & build probe-fdq "$FD;$EQ;$TL" &
wait
for v in base fd fdq; do echo "$v spills: $(grep 'spill stores' $O/r/build-$v.log | grep -vc ' 0 bytes spill stores') of $(grep -c 'spill stores' $O/r/build-$v.log)"; done
S=bench/results/2026-11-27-h100-session23
DIMS=128 timeout 100 bash $S/checks.sh build/fdq/apps/flashcute > $O/r/checks-fdq.txt 2>&1; echo "checks fdq rc=$?"
run() { b=$1; shift; out=$(timeout 60 build/$b/apps/flashcute run --dtype bf16 --d 128 --backend sm90 --check-heads 3 --iters 10 "$@" 2>&1); echo "rc=$? $b $* :: $(echo "$out" | grep -i -E 'max|check|repeat' | tr '\n' ' ' | cut -c1-300)"; }
{ for b in fd fdq; do
    run $b --batch 4 --heads 8 --seqlen 512 --fwd-workspace zeroed
    run $b --batch 3 --heads 7 --seqlen 1000 --causal --fwd-workspace zeroed
    run $b --batch 5 --heads 16 --heads-kv 4 --seqlen 700 --causal --fwd-workspace no
    run $b --batch 2 --heads 8 --seqlen-q 200 --seqlen-k 900 --fwd-workspace yes
    run $b --batch 3 --heads 5 --seqlen 2000 --window-left 300 --window-right 20 --fwd-workspace zeroed
  done; } > $O/r/checks-persistent.txt 2>&1
grep -c '^rc=0' $O/r/checks-fdq.txt $O/r/checks-persistent.txt; grep -h '^rc=' $O/r/checks-fdq.txt $O/r/checks-persistent.txt | grep -v '^rc=0' | cut -c1-250 | head
for v in fd fdq; do for c in "512 false" "1024 false" "512 true"; do set -- $c
  FLASHCUTE_TIMELINE_OUT=tl.bin timeout 60 build/probe-$v/apps/flashcute bench --dtype bf16 --d 128 --seqlen $1 --causal $2 \
    --pass fwd --backend sm90 --warmup 3 --iters 3 --no-flush > /dev/null 2>&1
  python3 bench/tile_timeline.py tl.bin --label "probe-$v: d 128 bf16 seqlen $1 causal $2" --md $O/r/timeline-$v.md > /dev/null
done; done
grep -A24 'seqlen 512 causal false' $O/r/timeline-fd.md | grep -E "start|epilogue done|Q wait|ring|decode"; grep -A24 'seqlen 512 causal false' $O/r/timeline-fdq.md | grep -E "start|epilogue done|Q wait|ring|decode"
gzip -f $O/r/build-*.log
tar czf $O/r.tgz -C $O r
