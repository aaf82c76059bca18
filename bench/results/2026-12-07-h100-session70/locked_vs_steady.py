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
import statistics
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))
import bench_report  # noqa: E402
import sm90_targets  # noqa: E402


def load(paths):
    return [json.load(open(p))["records"] for p in paths]


def clocks(runs):
    out = {}
    for case, per_run in sm90_targets.fwd_records(runs).items():
        both = [t for t in per_run.values() if "flashcute_sm90" in t and "sdpa_cudnn" in t]
        c = [(t["flashcute_sm90"].get("clock_mhz"), t["sdpa_cudnn"].get("clock_mhz")) for t in both]
        c = [x for x in c if x[0] and x[1]]
        if c:
            out[case] = (statistics.median(x[0] for x in c), statistics.median(x[1] for x in c))
    return out


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
    clk = clocks(steady_runs)
    lines = ["| dtype | d | causal | seqlen | locked ours TFLOP/s | locked ours / cuDNN | steady ours / cuDNN | "
             "steady MHz ours / cuDNN | steady x clock ratio | target | met locked | met steady |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    n_locked = n_steady = 0
    for key in sorted(set(locked) | set(steady)):
        lr, sr = locked.get(key), steady.get(key)
        tgt = (lr or sr)[8]
        lm = lr is not None and lr[6] >= tgt
        sm = sr is not None and sr[6] >= tgt
        n_locked += lm
        n_steady += sm
        c = clk.get(key)
        scaled = f"{sr[6] * c[1] / c[0]:.2f}" if sr and c else "–"
        lines.append(f"| {key[0]} | {key[1]} | {'yes' if key[2] else 'no'} | {key[3]} | "
                     f"{lr[4]:.0f} | {lr[6]:.2f} | " if lr else f"| {key[0]} | {key[1]} | {'yes' if key[2] else 'no'} | {key[3]} | – | – | ")
        lines[-1] += (f"{sr[6]:.2f} | {c[0]:.0f} / {c[1]:.0f} | " if sr and c else (f"{sr[6]:.2f} | – | " if sr else "– | – | "))
        lines[-1] += f"{scaled} | {tgt:.2f} | {'yes' if lm else 'no'} | {'yes' if sm else ('no' if sr else '–')} |"
    print(f"Met: {n_locked} of {len(locked)} rows at the locked clock; {n_steady} of {len(steady)} at the steady state.\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
