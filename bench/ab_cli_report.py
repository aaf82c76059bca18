#!/usr/bin/env python3
"""The table of scripts/ab-cli: each variant's TFLOP/s and its ratio to the first variant, row by row.

    python3 bench/ab_cli_report.py DIR BASE [NAME ...]

DIR holds NAME-r<round>-s<set>.json (`flashcute bench --json`, one run per variant, round and set).
A ratio cell is the median over rounds of (variant / BASE) with both taken in the same round (the
variants of a round run back to back, so the clock drift between rounds cancels), with the range over
rounds; the TFLOP/s cell is the variant's median over rounds.
"""

import argparse
import glob
import json
import os
import re
import statistics
import sys

from bench_report import md_table


def load(directory, name):
    """{(impl, pass, d, causal, seqlen): {round: tflops}}"""
    out = {}
    for path in glob.glob(os.path.join(directory, f"{name}-r*-s*.json")):
        m = re.search(rf"{re.escape(name)}-r(\d+)-s\d+\.json$", path)
        if not m:
            continue
        with open(path) as f:
            records = json.load(f)["records"]
        for r in records:
            if r.get("status") == "ok" and r.get("tflops"):
                key = (r["impl"], r["pass"], r["d"], r["causal"], r["seqlen"])
                out.setdefault(key, {})[int(m.group(1))] = r["tflops"]
    return out


def table(directory, names):
    data = {n: load(directory, n) for n in names}
    base = data[names[0]]
    keys = sorted({k for d in data.values() for k in d})
    head = ["impl", "pass", "d", "causal", "seqlen", f"{names[0]} TFLOP/s"]
    for n in names[1:]:
        head += [f"{n} TFLOP/s", f"{n} / {names[0]}"]
    body = []
    for k in keys:
        cells = [k[0], k[1], str(k[2]), "yes" if k[3] else "no", str(k[4])]
        b = base.get(k, {})
        cells.append(f"{statistics.median(b.values()):.1f}" if b else "–")
        for n in names[1:]:
            v = data[n].get(k, {})
            cells.append(f"{statistics.median(v.values()):.1f}" if v else "–")
            ratios = [v[r] / b[r] for r in v if r in b]
            cells.append(f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})" if ratios else "–")
        body.append(cells)
    return md_table(head, body)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("directory")
    p.add_argument("names", nargs="+")
    a = p.parse_args(argv)
    print(table(a.directory, a.names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
