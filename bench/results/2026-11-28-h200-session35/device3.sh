#!/usr/bin/env bash
# Session 35, call 3 (H200, call 2's build tree): compute-sanitizer on d 64's masked short tiles with
# per-warpgroup Q (the default now), several tiles per CTA; then two d 64 grids.
O=${OUT:-gpu-out}; mkdir -p $O/r
b=build/gpu/apps/flashcute
san() {
  local tool=$1 lim=$2; shift 2
  timeout $lim compute-sanitizer --tool $tool --error-exitcode 1 $b run --backend sm90 --dtype bf16 --d 64 --iters 1 --check-heads 2 "$@" > san.txt 2>&1
  echo "rc=$? $tool $* :: $(grep -E 'SUMMARY|max\|out' san.txt | tr '\n' ' ' | cut -c1-200)"
}
t0=$SECONDS
{
  san racecheck 150 --batch 4 --heads 40 --seqlen 512 --causal --fwd-workspace yes
  san racecheck 150 --batch 2 --heads 40 --seqlen 1000 --causal --fwd-workspace no
  san synccheck 60 --batch 4 --heads 40 --seqlen 512 --causal --fwd-workspace no
  san memcheck 60 --batch 4 --heads 40 --seqlen 700 --causal --fwd-workspace yes
  san initcheck 60 --batch 4 --heads 40 --seqlen 500 --causal --fwd-workspace no
} > $O/r/sanitizer-wgq.txt 2>&1
echo "sanitizer ($((SECONDS - t0)) s)"; cat $O/r/sanitizer-wgq.txt
t0=$SECONDS
GRID_SPECS="64:run1 64:run2" GRID_TIMEOUT=110 OUT=$O/r timeout 240 scripts/gpu-grid > $O/r/grid.log 2>&1
echo "grid rc=$? ($((SECONDS - t0)) s)"; tail -5 $O/r/grid.log
cd $O && tar czf r.tgz r && rm -rf r
