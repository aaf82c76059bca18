#!/usr/bin/env bash
# Session 38, call 4 (H200): is the carried loop's loss the dynamic scheduler's claim? Call 1's two
# binaries, each with the dynamic scheduler (a zeroed workspace: base, carry) and with the static
# deal (no workspace: base_s, carry_s; persistent up to 1k keys at d 128), ab_steady without a peer.
O=${OUT:-gpu-out}; mkdir -p $O/r
B=build/ab38bin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader > $O/r/gpu.txt
for v in base carry; do echo "--fwd-workspace zeroed" > $B/$v/args; done
for v in base_s carry_s; do echo "--fwd-workspace no" > $B/$v/args; done
for v in base carry base_s carry_s; do echo "$v $(sha1sum < $B/$v/flashcute | cut -c1-12) $(cat $B/$v/args)"; done | tee $O/r/bins.txt
t0=$SECONDS
timeout 280 python3 bench/ab_steady.py --bin-dir $B --variants base,carry,base_s,carry_s \
  --case 128:no:512 --case 128:no:1024 --case 128:yes:512 --case 128:yes:1024 \
  --iters 600 --rounds 2 --out $O/r/ab.md > $O/r/ab.log 2>&1
echo "ab rc=$? ($((SECONDS - t0)) s)"; tail -7 $O/r/ab.md
cd $O && tar czf r.tgz r && rm -rf r
