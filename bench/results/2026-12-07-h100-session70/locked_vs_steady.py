#!/usr/bin/env python3
"""Issue 7's rows at ncu's locked clock beside the same rows at the steady state, one table.

    python3 locked_vs_steady.py --locked call1/ncu-bf16-base.json call1/ncu-fp16-base.json \
        --steady STEADY_JSON ... --fa3-json PEERS_JSON > locked-vs-steady.md

Per row: ours / cuDNN at the locked clock (ncu_pairs), at the steady state (the median of each run's
ratio, as bench/sm90_targets.py takes it) with both kernels' median clocks there, the steady ratio
scaled by cuDNN's clock over ours (what the locked ratio would be if the clocks alone separated the
two), and the target.
"""
import argparse
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))
import bench_report  # noqa: E402
import sm90_targets  # noqa: E402


def load(paths):
    return [json.load(open(p))["records"] for p in paths]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--locked", nargs="+", required=True)
    ap.add_argument("--steady", nargs="+", required=True)
    ap.add_argument("--fa3-json", required=True)
    a = ap.parse_args()
    fa3 = bench_report.load_fa3(a.fa3_json)
    locked = {r[:4]: r for r in sm90_targets.rows(load(a.locked), fa3)}
    steady_runs = load(a.steady)
    steady = {r[:4]: r for r in sm90_targets.rows(steady_runs, fa3)}
    medians = sm90_targets.phase_medians(steady_runs)
    lines = ["| dtype | d | causal | seqlen | locked ours TFLOP/s | locked ours / cuDNN | steady ours / cuDNN | "
             "steady MHz ours / cuDNN | steady x clock ratio | target | met locked | met steady |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for key in sorted(set(locked) | set(steady)):
        lr, sr = locked.get(key), steady.get(key)
        m = medians.get(key, {})
        ours_mhz, cudnn_mhz = (m.get(impl, (None,))[0] for impl in ("flashcute_sm90", "sdpa_cudnn"))
        clk = sr is not None and ours_mhz is not None and cudnn_mhz is not None
        cells = [key[0], key[1], "yes" if key[2] else "no", key[3],
                 f"{lr[4]:.0f}" if lr else "–", f"{lr[6]:.2f}" if lr else "–", f"{sr[6]:.2f}" if sr else "–",
                 f"{ours_mhz:.0f} / {cudnn_mhz:.0f}" if clk else "–",
                 f"{sr[6] * cudnn_mhz / ours_mhz:.2f}" if clk else "–", f"{(lr or sr)[8]:.2f}",
                 ("yes" if lr[9] else "no") if lr else "–", ("yes" if sr[9] else "no") if sr else "–"]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    n_locked = sum(r[9] for r in locked.values())
    n_steady = sum(r[9] for r in steady.values())
    print(f"Met: {n_locked} of {len(locked)} rows at the locked clock; {n_steady} of {len(steady)} at the steady state.\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
