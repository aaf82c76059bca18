#!/usr/bin/env python3
"""TFLOP/s against the number of tiles: the same sequence length and head dim at several head counts,
so that the tiles fill a whole number of waves of the GPU's SMs or leave a partial last wave.

A kernel that runs one tile per CTA (or a persistent one dealing tiles evenly) loses the idle part of
the last wave: BENCHMARKING.md's grid has 2048 tiles of 128 query rows at d 128 (every length), which
is 15.52 waves of an H100's 132 SMs. Running heads such that the tiles make exactly 16 waves next to
the grid's shape shows what the partial wave costs, at the steady state (thousands of back-to-back
launches per phase, as bench/ab_steady.py), for our kernel and, on the same shapes, SDPA's cuDNN
backend.

    python3 bench/wave_sweep.py --bin build/cli/apps/flashcute --case 128:8192:1x32,1x33,1x34 --rounds 2

A case is D:SEQLEN:BxH[,BxH...] (non-causal, forward, bf16).
"""

import argparse
import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ab_steady import peer_runner, run_cli, steady  # noqa: E402
from bench import GpuSampler  # noqa: E402
from bench_grid import pass_flops  # noqa: E402


def parse_case(text):
    d, s, shapes = text.split(":")
    return int(d), int(s), [tuple(int(x) for x in bh.split("x")) for bh in shapes.split(",")]


def ours(binary, d, s, b, h, iters, extra):
    """ab_steady's phase of `flashcute bench` (bf16 forward, SM90) on batch b x heads h."""
    a = types.SimpleNamespace(dtype="bf16", passes="fwd", backend="sm90", iters=iters)
    return run_cli(binary, (d, False, s), a, ["--tokens", str(b * s), "--hidden", str(h * d)] + extra)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="flashcute binary")
    ap.add_argument("--case", action="append", type=parse_case, required=True)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=1.5, help="GPU time per phase (iterations sized from it)")
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--block-m", type=int, default=128, help="query rows per tile, for the wave column")
    ap.add_argument("--no-cudnn", action="store_true")
    ap.add_argument("--extra", default="", help="more `flashcute bench` words (e.g. '--fwd-workspace no')")
    ap.add_argument("--out", help="markdown file for the table")
    a = ap.parse_args()
    # SDPA's cuDNN backend on the same shapes (ab_steady's peer, timed the same way)
    peer = None if a.no_cudnn else peer_runner(types.SimpleNamespace(peer="sdpa_cudnn", dtype="bf16", passes="fwd",
                                                                        iters=None))
    sampler = GpuSampler(0, period_s=0.01)
    rows, spans = {}, []
    sampler.start()
    try:
        for r in range(a.rounds):
            for d, s, shapes in a.case:
                for b, h in shapes:
                    flops = pass_flops(dict(batch=b, heads=h, seqlen=s, d=d, causal=False), "fwd")
                    iters = max(50, int(a.seconds * 600e12 / flops))
                    key = (d, s, b, h)
                    t0, t1, ours_tf = ours(a.bin, d, s, b, h, iters, a.extra.split())
                    spans.append((key, t0, t1))
                    rows.setdefault(key, {"ours": [], "cudnn": []})
                    rows[key]["ours"].append(ours_tf)
                    if peer:
                        rows[key]["cudnn"].append(peer((d, False, s), shape=(b, h), iters=iters)[2])
                    print(f"round {r}: d {d} s {s} {b}x{h}: ours {ours_tf:.1f}"
                          + (f" cuDNN {rows[key]['cudnn'][-1]:.1f}" if peer else ""), flush=True)
    finally:
        samples = sampler.stop()
    clocks = {}
    for key, t0, t1 in spans:  # the mean SM clock over the last 60% of each of our phases' launches
        w = steady(samples, t0, t1)
        if w:
            clocks.setdefault(key, []).append(w["clock_mhz"])
    lines = ["| d | seqlen | batch x heads | tiles / SMs | ours TFLOP/s (rounds) | cuDNN TFLOP/s (rounds) | SM MHz |",
             "|---|---|---|---|---|---|---|"]
    for (d, s, b, h), v in rows.items():
        tiles = b * h * ((s + a.block_m - 1) // a.block_m)
        fmt = lambda xs: ", ".join(f"{x:.1f}" for x in xs) or "-"  # noqa: E731
        mhz = ", ".join(f"{c:.0f}" for c in clocks.get((d, s, b, h), [])) or "-"
        lines.append(f"| {d} | {s} | {b}x{h} | {tiles / a.sms:.2f} | {fmt(v['ours'])} | {fmt(v['cudnn'])} | {mhz} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
