#!/usr/bin/env python3
"""Issue 7's SM90 forward targets, row by row, from bench.py results or ab_steady's --records (no torch).

Target per row (same run): ours / cuDNN >= 1.05 * max(1, F) for seqlen >= 2k and >= max(1, F) for 512 and 1k,
with F = FA3 / cuDNN of the same (d, causal, seqlen) in the stored peer JSON (measured on bf16; used for fp16
too). "ours" is the SM90 forward's TFLOP/s.

    python3 bench/sm90_targets.py RESULTS_JSON [RESULTS_JSON ...] --fa3-json PEERS_JSON > sm90-targets.md
    python3 bench/sm90_targets.py ... --plot sm90-targets.png   # also the figure (needs matplotlib)
    python3 bench/sm90_targets.py ... --power                   # also the clock, power and power-cap columns
    python3 bench/sm90_targets.py STEADY-round*.json --ours flashcute_sm90:eqs ...  # ab_steady's variant eqs as ours

The figure has one panel per head dim and mask: ours / cuDNN against seqlen for each dtype (a filled
marker where the row is met, an open one where not) and the target as a dashed step line.
"""

import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_report as report  # noqa: E402


def target(seqlen, f):
    base = max(1.0, f)
    return base * 1.05 if seqlen >= 2048 else base


def fwd_records(runs):
    """{(dtype, d, causal, seqlen): {run index: {impl: record}}} of the ok fwd records of ours and cuDNN."""
    if runs and isinstance(runs[0], dict):
        runs = [runs]
    by_case = {}
    for i, records in enumerate(runs):
        for r in records:
            if r["pass"] == "fwd" and r["status"] == "ok" and r["impl"] in ("flashcute_sm90", "sdpa_cudnn"):
                by_case.setdefault((r["dtype"], r["d"], r["causal"], r["seqlen"]), {}).setdefault(i, {})[r["impl"]] = r
    return by_case


def as_ours(records, ours):
    """records with impl `ours` as flashcute_sm90 (what rows() reads), the other flashcute_sm90 records dropped."""
    if ours == "flashcute_sm90":
        return records
    return [dict(r, impl="flashcute_sm90") if r["impl"] == ours else r for r in records if r["impl"] != "flashcute_sm90"]


def phase_medians(runs):
    """{(dtype, d, causal, seqlen): {impl: (MHz, W, cap)}} for ours and cuDNN: the medians over the runs that
    have both (those rows() takes) of the phase's SM clock (ab_steady's clock_mhz, bench.py's sm_clock_mhz),
    its power and power_cap_frac; None for a field no record has."""
    out = {}
    for case, per_run in fwd_records(runs).items():
        both = [t for t in per_run.values() if "flashcute_sm90" in t and "sdpa_cudnn" in t]
        out[case] = {}
        for impl in ("flashcute_sm90", "sdpa_cudnn"):
            recs = [t[impl] for t in both]
            fields = ([r.get("clock_mhz", r.get("sm_clock_mhz")) for r in recs], [r.get("power_w") for r in recs],
                      [r.get("power_cap_frac") for r in recs])
            out[case][impl] = tuple(statistics.median(v) if v else None
                                    for v in ([x for x in f if x is not None] for f in fields))
    return out


def power_cells(runs):
    """{(dtype, d, causal, seqlen): (ours cell, cuDNN cell)}, each "MHz / W / cap" of phase_medians (cap only
    where the records have it); "–" without clock or power."""
    out = {}
    for case, per_impl in phase_medians(runs).items():
        cells = []
        for impl in ("flashcute_sm90", "sdpa_cudnn"):
            clock, power, cap = per_impl[impl]
            if clock is None and power is None:
                cells.append("–")
                continue
            cell = " / ".join(f"{v:.0f}" if v is not None else "–" for v in (clock, power))
            cells.append(cell + (f" / {cap:.2f}" if cap is not None else ""))
        out[case] = tuple(cells)
    return out


def rows(runs, fa3):
    """[(dtype, d, causal, seqlen, ours, cudnn, ratio, F, target, met, lo, hi)] of every fwd case with both numbers.

    `runs` is one run's records or a list of runs' record lists. With several runs a row's ratio is the median
    over the runs of ours / cuDNN inside each run (the two are measured side by side; a run-to-run drift moves
    both), lo / hi its range, and ours / cuDNN the medians of their TFLOP/s; `met` is decided on the median.
    """
    out = []
    for (dtype, d, causal, seqlen), per_run in sorted(fwd_records(runs).items()):
        stored = fa3.get((d, causal, seqlen, "fwd"))
        pairs = [(t["flashcute_sm90"]["tflops"], t["sdpa_cudnn"]["tflops"]) for t in per_run.values()
                 if "flashcute_sm90" in t and "sdpa_cudnn" in t]
        if not pairs or not stored:
            continue
        f = stored["fa3"] / stored["cudnn"]
        ratios = [o / c for o, c in pairs]
        ratio = statistics.median(ratios)
        goal = target(seqlen, f)
        out.append((dtype, d, causal, seqlen, statistics.median(o for o, _ in pairs),
                    statistics.median(c for _, c in pairs), ratio, f, goal, ratio >= goal, min(ratios), max(ratios)))
    return out


def plot(table, path, title=""):
    """The rows of `table` (rows()) as a grid of panels: head dims down, non-causal / causal across."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dims = sorted({r[1] for r in table})
    dtypes = sorted({r[0] for r in table})
    fig, axes = plt.subplots(len(dims), 2, figsize=(10, 2.9 * len(dims)), squeeze=False, sharex=True)
    colors = {"bf16": "tab:blue", "fp16": "tab:orange"}
    for i, d in enumerate(dims):
        for j, causal in enumerate((False, True)):
            ax = axes[i][j]
            sub = [r for r in table if r[1] == d and r[2] == causal]
            goals = sorted({(r[3], r[8]) for r in sub})
            if goals:
                xs = [g[0] for g in goals]
                ax.step(xs, [g[1] for g in goals], where="mid", color="black", linestyle="--", linewidth=1,
                        label="target")
            for dt in dtypes:
                pts = sorted((r[3], r[6], r[9]) for r in sub if r[0] == dt)
                if not pts:
                    continue
                c = colors.get(dt, None)
                ax.plot([x for x, _, _ in pts], [y for _, y, _ in pts], color=c, linewidth=1, label=f"{dt} ours / cuDNN")
                ax.scatter([x for x, _, ok in pts if ok], [y for _, y, ok in pts if ok], color=c, zorder=3, s=28)
                ax.scatter([x for x, _, ok in pts if not ok], [y for _, y, ok in pts if not ok], facecolors="white",
                           edgecolors=c, zorder=3, s=28)
            ax.axhline(1.0, color="grey", linewidth=0.6)
            ax.set_xscale("log", base=2)
            ax.set_title(f"d {d}, {'causal' if causal else 'non-causal'}", fontsize=10)
            if j == 0:
                ax.set_ylabel("ours / cuDNN")
            if i == len(dims) - 1:
                ax.set_xlabel("seqlen")
                ax.set_xticks(sorted({r[3] for r in table}))
                ax.set_xticklabels([f"{x // 1024}k" if x >= 1024 else str(x) for x in sorted({r[3] for r in table})])
            ax.grid(True, alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    met = sum(r[9] for r in table)
    fig.suptitle((title + ": " if title else "") + f"{met} of {len(table)} rows met (filled: met)", fontsize=11)
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.04, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results", nargs="+")
    p.add_argument("--fa3-json", required=True)
    p.add_argument("--plot", help="also draw the rows into this PNG (needs matplotlib)")
    p.add_argument("--title", default="", help="the figure's title (with --plot)")
    p.add_argument("--ours", default="flashcute_sm90",
                   help="the impl whose records are ours (ab_steady's variant NAME past the first: flashcute_sm90:NAME)")
    p.add_argument("--power", action="store_true",
                   help="also ours' and cuDNN's SM clock (MHz), power (W) and power-cap fraction, where recorded")
    a = p.parse_args(argv)
    runs, sources = [], []
    for path in a.results:
        with open(path) as f:
            doc = json.load(f)
        if not any(r["impl"] == a.ours for r in doc["records"]):
            p.error(f"{path} has no records of {a.ours} (--ours)")
        runs.append(as_ours(doc["records"], a.ours))
        sources += [f"{m.get('date')} git {m.get('git')}" + (f" ({m['method']})" if m.get("method") else "")
                    for m in doc["meta"]["runs"]]
    table = rows(runs, report.load_fa3(a.fa3_json))
    met = sum(r[9] for r in table)
    several = len(runs) > 1
    print("# SM90 forward against the issue-7 targets\n")
    print(f"From {len(a.results)} run(s) ({'; '.join(sources)}). Target: ours / cuDNN >= 1.05 x max(1, F) "
          "for seqlen >= 2k and >= max(1, F) for 512 and 1k; F = FA3 / cuDNN from the stored peer JSON (bf16 rows, "
          "used for fp16 too). " + ("Each cell is the median over the runs (TFLOP/s: of each; ours/cuDNN: of the "
                                    "ratio inside each run, with its range); met is decided on that median. "
                                    if several else "") +
          ("SM90 / cuDNN MHz / W / cap: the SM clock and board power of each phase (NVML means over the phase, "
           "medians over the runs) and, where the records have it, cap: the fraction of its NVML samples with the "
           "SW power-cap clock-event reason set (median over the runs); – where the records have none. "
           if a.power else "") + f"{met} of {len(table)} rows met.\n")
    cells = power_cells(runs) if a.power else {}
    print("| dtype | d | causal | seqlen | SM90 | cuDNN | ours/cuDNN | " + ("range | " if several else "") +
          "F (FA3/cuDNN, stored) | target | met |" +
          (" SM90 MHz / W / cap | cuDNN MHz / W / cap |" if a.power else ""))
    print("|---|---|---|---|---|---|---|" + ("---|" if several else "") + "---|---|---|" +
          ("---|---|" if a.power else ""))
    for dtype, d, causal, seqlen, ours, cudnn, ratio, f, goal, ok, lo, hi in table:
        spread = f"{lo:.2f}-{hi:.2f} | " if several else ""
        extra = " {} | {} |".format(*cells[(dtype, d, causal, seqlen)]) if a.power else ""
        print(f"| {dtype} | {d} | {'yes' if causal else 'no'} | {seqlen} | {ours:.0f} | {cudnn:.0f} | {ratio:.2f} | "
              f"{spread}{f:.2f} | {goal:.2f} | {'yes' if ok else 'no'} |{extra}")
    if a.plot:
        plot(table, a.plot, a.title)
    return 0


if __name__ == "__main__":
    sys.exit(main())
