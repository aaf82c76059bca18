#!/usr/bin/env python3
"""The table of scripts/ab: each variant's ratio to a peer, row by row, over its rounds (no torch).

    python3 bench/ab_report.py DIR NAME [NAME ...] [--peer sdpa_flash]

DIR holds NAME-r<round>/results.json (one bench.py process per variant and round). A cell is the
median over rounds of (flashcute_sm80 TFLOP/s / peer TFLOP/s) in the same process, with the range over
rounds; the last column of each variant after the first is that median over the first variant's, so
clock drift between processes cancels through the peer.
"""

import argparse
import glob
import json
import os
import re
import statistics
import sys

from bench_report import md_table

OURS = "flashcute_sm80"


def load_rounds(directory, name, peer):
    """{(pass, d, causal, seqlen): [(ours / peer, ours TFLOP/s, ours MHz, peer MHz), one per round]}; the
    clocks are the records' sm_clock_mhz (bench.py's NVML samples; None where a record has none)."""
    out = {}
    for path in sorted(glob.glob(os.path.join(directory, f"{name}-r*", "results.json"))):
        if not re.search(rf"{re.escape(name)}-r\d+$", os.path.dirname(path)):
            continue
        with open(path) as f:
            records = json.load(f)["records"]
        by_case = {}
        for r in records:
            if r["status"] == "ok" and r.get("tflops"):
                by_case.setdefault((r["pass"], r["d"], r["causal"], r["seqlen"]), {})[r["impl"]] = r
        for key, t in by_case.items():
            if OURS in t and peer in t:
                ours, other = t[OURS], t[peer]
                out.setdefault(key, []).append((ours["tflops"] / other["tflops"], ours["tflops"],
                                                ours.get("sm_clock_mhz"), other.get("sm_clock_mhz")))
    return out


def table(directory, names, peer):
    data = {n: load_rounds(directory, n, peer) for n in names}
    keys = sorted({k for d in data.values() for k in d}, key=lambda k: (k[0], k[1], k[2], k[3]))
    # A clock column per variant (the median SM clock of ours / of the peer over rounds) where the
    # records carry clocks.
    clocks = any(v[2] is not None for d in data.values() for vals in d.values() for v in vals)
    head = ["pass", "d", "causal", "seqlen"]
    for i, n in enumerate(names):
        head += ([f"{n} / {peer}", f"{n} TFLOP/s"] + ([f"{n} MHz (ours / {peer})"] if clocks else []) +
                 ([f"{n} / {names[0]}"] if i else []))
    body = []
    for k in keys:
        cells = [k[0], str(k[1]), "yes" if k[2] else "no", str(k[3])]
        base = None
        for i, n in enumerate(names):
            vals = data[n].get(k, [])
            if not vals:
                cells += ["–", "–"] + (["–"] if clocks else []) + (["–"] if i else [])
                continue
            ratios = [v[0] for v in vals]
            med = statistics.median(ratios)
            cells.append(f"{med:.3f} ({min(ratios):.2f}-{max(ratios):.2f}, n={len(ratios)})")
            cells.append(f"{statistics.median(v[1] for v in vals):.0f}")
            if clocks:
                mhz = [statistics.median(c) if c else None
                       for c in ([v[2] for v in vals if v[2] is not None], [v[3] for v in vals if v[3] is not None])]
                cells.append(" / ".join("–" if m is None else f"{m:.0f}" for m in mhz))
            if i == 0:
                base = med
            else:
                cells.append(f"{med / base:.3f}" if base else "–")
        body.append(cells)
    return md_table(head, body)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("directory")
    p.add_argument("names", nargs="+")
    p.add_argument("--peer", default="sdpa_flash")
    a = p.parse_args(argv)
    print(table(a.directory, a.names, a.peer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
