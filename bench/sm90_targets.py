#!/usr/bin/env python3
"""Issue 7's SM90 forward targets, row by row, from bench.py results or ab_steady's --records (no torch).

Target per row (same run): ours / cuDNN >= 1.05 * max(1, F) for seqlen >= 2k and >= max(1, F) for 512 and 1k,
with F = FA3 / cuDNN of the same (d, causal, seqlen) in the stored peer JSON (measured on bf16; used for fp16
too). "ours" is the SM90 forward's TFLOP/s.

    python3 bench/sm90_targets.py RESULTS_JSON [RESULTS_JSON ...] --fa3-json PEERS_JSON > sm90-targets.md
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


def rows(runs, fa3):
    """[(dtype, d, causal, seqlen, ours, cudnn, ratio, F, target, met, lo, hi)] of every fwd case with both numbers.

    `runs` is one run's records or a list of runs' record lists. With several runs a row's ratio is the median
    over the runs of ours / cuDNN inside each run (the two are measured side by side; a run-to-run drift moves
    both), lo / hi its range, and ours / cuDNN the medians of their TFLOP/s; `met` is decided on the median.
    """
    if runs and isinstance(runs[0], dict):
        runs = [runs]
    by_case = {}
    for i, records in enumerate(runs):
        for r in records:
            if r["pass"] == "fwd" and r["status"] == "ok" and r["impl"] in ("flashcute_sm90", "sdpa_cudnn"):
                by_case.setdefault((r["dtype"], r["d"], r["causal"], r["seqlen"]), {}).setdefault(i, {})[r["impl"]] = \
                    r["tflops"]
    out = []
    for (dtype, d, causal, seqlen), per_run in sorted(by_case.items()):
        stored = fa3.get((d, causal, seqlen, "fwd"))
        pairs = [(t["flashcute_sm90"], t["sdpa_cudnn"]) for t in per_run.values()
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


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results", nargs="+")
    p.add_argument("--fa3-json", required=True)
    a = p.parse_args(argv)
    runs, sources = [], []
    for path in a.results:
        with open(path) as f:
            doc = json.load(f)
        runs.append(doc["records"])
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
                                    if several else "") + f"{met} of {len(table)} rows met.\n")
    print("| dtype | d | causal | seqlen | SM90 | cuDNN | ours/cuDNN | " + ("range | " if several else "") +
          "F (FA3/cuDNN, stored) | target | met |")
    print("|---|---|---|---|---|---|---|" + ("---|" if several else "") + "---|---|---|")
    for dtype, d, causal, seqlen, ours, cudnn, ratio, f, goal, ok, lo, hi in table:
        spread = f"{lo:.2f}-{hi:.2f} | " if several else ""
        print(f"| {dtype} | {d} | {'yes' if causal else 'no'} | {seqlen} | {ours:.0f} | {cudnn:.0f} | {ratio:.2f} | "
              f"{spread}{f:.2f} | {goal:.2f} | {'yes' if ok else 'no'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
