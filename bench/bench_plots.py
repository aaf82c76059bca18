#!/usr/bin/env python3
"""PNG plots of bench.py's results: a few multi-panel figures, never one file per case.

  tflops_<pass>.png   one figure per pass: a panel per (dtype, causal) x d, TFLOP/s vs seqlen, one line
                      per implementation (FA3 from the stored JSON dashed, bf16 fwd/bwd only)
  memory.png          peak memory above the inputs vs seqlen, a panel per pass x d (first dtype,
                      non-causal), log scale: the fused kernels' O(N) against MATH's O(N^2)

    python3 bench/bench_plots.py results.json --out DIR [--fa3-json PATH]
(the same figures bench.py draws at the end of a run; for a machine that has matplotlib when the
GPU machine does not)
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_report as report  # noqa: E402

STYLE = {  # (color, marker): flashcute solid and thick, peers thinner
    "flashcute_sm80": ("#d62728", "o"),
    "flashcute_sm90": ("#8c1c13", "D"),
    "sdpa_flash": ("#1f77b4", "s"),
    "sdpa_cudnn": ("#2ca02c", "^"),
    "sdpa_efficient": ("#9467bd", "v"),
    "sdpa_math": ("#7f7f7f", "x"),
    "flex": ("#ff7f0e", "P"),
    "flash_attn": ("#17becf", "<"),
    "fa3": ("#bcbd22", ">"),
}
PASS_FILE = {"fwd": "tflops_fwd.png", "bwd": "tflops_bwd.png", "fwd+bwd": "tflops_fwdbwd.png"}


def _series(records, impl, **match):
    pts = sorted((r["seqlen"], r) for r in records if r["impl"] == impl and all(r[k] == v for k, v in match.items()))
    return pts


def _plot_impl(ax, name, pts):
    """One implementation's line (our paths drawn thicker)."""
    if pts:
        color, marker = STYLE.get(name, (None, "."))
        ax.plot(*zip(*pts), label=report.label(name), color=color, marker=marker,
                linewidth=2.4 if name in report.OURS else 1.2, markersize=4)


def _label_axis(ax, seqlens, title, ylabel):
    _seqlen_axis(ax, seqlens)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("seqlen (batch = 16k / seqlen)", fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(labelsize=7)


def _finish(plt, fig, axes, rows, title, path):
    """Shared legend above the panels, the title, then save and close."""
    handles, labels = _legend(axes)
    # As many entries per legend row as the figure's width holds (~1.5 inches each: one head dim's
    # column holds 3 of the 5 implementations, so its legend takes two rows).
    ncol = max(1, min(5, len(labels), int(fig.get_figwidth() / 1.5)))
    legend_rows = -(-len(labels) // ncol) if labels else 1
    fig.legend(handles, labels, loc="upper center", ncol=ncol, fontsize=8, frameon=False)
    height = 3.4 * rows
    legend_in = 0.2 * legend_rows  # inches from the top: the legend's rows, the title, the panels
    fig.suptitle(title, y=1 - (0.42 + legend_in) / height, fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 1 - (0.6 + legend_in) / height))
    fig.savefig(path, dpi=90)
    plt.close(fig)


def plot_all(doc, out, fa3=None):
    """Draw the figures into `out`; returns the file names written. Raises ImportError without matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = [r for r in doc["records"]]
    impls = report.impls_in(records)
    files = []
    dtypes = sorted({r["dtype"] for r in records}, key=lambda x: (x != "bf16", x))
    dims = sorted({r["d"] for r in records})
    causals = sorted({r["causal"] for r in records})
    seqlens = sorted({r["seqlen"] for r in records})
    device = doc["meta"]["runs"][0].get("device", "?") if doc["meta"]["runs"] else "?"
    for p in ("fwd", "bwd", "fwd+bwd"):
        if not any(r["pass"] == p for r in records):
            continue
        panels = [(dt, c) for dt in dtypes for c in causals]
        fig, axes = plt.subplots(len(panels), len(dims), figsize=(4.6 * len(dims), 3.4 * len(panels)), squeeze=False)
        for i, (dt, c) in enumerate(panels):
            for j, d in enumerate(dims):
                ax = axes[i][j]
                for n in impls:
                    pts = [(s, r["tflops"]) for s, r in _series(records, n, dtype=dt, causal=c, d=d, **{"pass": p})
                           if r["tflops"]]
                    _plot_impl(ax, n, pts)
                if fa3 and dt == "bf16" and p in ("fwd", "bwd"):
                    pts = sorted((s, v["fa3"]) for (dd, cc, s, pp), v in fa3.items()
                                 if dd == d and cc == c and pp == p and v.get("fa3"))
                    if pts:
                        ax.plot(*zip(*pts), label="FA3 (stored JSON, not this run)", color="black", linestyle="--",
                                linewidth=1.0)
                _label_axis(ax, seqlens, f"{dt} d{d} {'causal' if c else 'non-causal'}", "TFLOP/s")
                ax.set_ylim(bottom=0)
                ax.grid(alpha=0.3)
        _finish(plt, fig, axes, len(panels), f"attention {p}, TFLOP/s on {device}", os.path.join(out, PASS_FILE[p]))
        files.append(PASS_FILE[p])

    mem = [r for r in records if r.get("peak_mem_bytes") is not None]
    if mem:
        dt = dtypes[0]
        causal = False if False in causals else causals[0]
        passes = [p for p in ("fwd", "bwd", "fwd+bwd") if any(r["pass"] == p for r in mem)]
        fig, axes = plt.subplots(len(passes), len(dims), figsize=(4.6 * len(dims), 3.4 * len(passes)), squeeze=False)
        for i, p in enumerate(passes):
            for j, d in enumerate(dims):
                ax = axes[i][j]
                for n in impls:
                    pts = [(s, r["peak_mem_bytes"] / 2**20) for s, r in
                           _series(mem, n, dtype=dt, causal=causal, d=d, **{"pass": p}) if r["peak_mem_bytes"] > 0]
                    _plot_impl(ax, n, pts)
                ax.set_yscale("log")  # before the labels: a scale change resets the tick label size
                _label_axis(ax, seqlens, f"{p} {dt} d{d} {'causal' if causal else 'non-causal'}",
                            "peak MiB above inputs")
                ax.grid(alpha=0.3, which="both")
        _finish(plt, fig, axes, len(passes), f"peak memory above the inputs on {device}", os.path.join(out, "memory.png"))
        files.append("memory.png")
    return files


def _seqlen_axis(ax, seqlens):
    ax.set_xscale("log", base=2)
    ax.set_xticks(seqlens)
    ax.set_xticklabels([f"{s // 1024}k" if s >= 1024 else str(s) for s in seqlens])
    ax.minorticks_off()


def _legend(axes):
    seen = {}
    for row in axes:
        for ax in row:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                seen.setdefault(lab, h)
    return list(seen.values()), list(seen.keys())


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results", help="results.json from bench.py")
    p.add_argument("--out", required=True)
    p.add_argument("--fa3-json", default=None)
    a = p.parse_args()
    with open(a.results) as f:
        doc = json.load(f)
    os.makedirs(a.out, exist_ok=True)
    fa3 = report.load_fa3(a.fa3_json) if a.fa3_json else None
    print("\n".join(plot_all(doc, a.out, fa3)))


if __name__ == "__main__":
    main()
