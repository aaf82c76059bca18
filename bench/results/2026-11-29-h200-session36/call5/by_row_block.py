#!/usr/bin/env python3
"""Session 36, call 5: the probe dumps of the per-warpgroup-Q kernel (56 slots a tile), per row block.

Warpgroup c computes row block rb = c on a CTA's even tiles and 3 - c on its odd ones (WG_Q=2), so
grouping by rb puts together the tiles where a warpgroup saw the same keys (rb 3: the most).
Cycles, means over the tiles:
  issue_before_start   the producer's issue of this warpgroup's Q slice, before its tile start
  issue_to_qret        that issue -> the warpgroup's Q wait returned (after the blocks it skips)
  issue_after_prevPV   the warpgroup's previous tile's last P V complete -> this issue
  start_to_qret        tile start -> Q wait returned
  firstS_to_lastPV     first S complete -> last P V complete

    python3 by_row_block.py timeline-tl3-512.bin.gz [...]
"""
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
from tile_timeline import load  # noqa: E402  (bench/tile_timeline.py)


def main(paths):
    for path in paths:
        meta, recs = load(path)
        qslot = 4 + 12 * 4
        if meta["slots"] != 56 or meta["wgs"] != 4:
            sys.exit(f"{path}: not a 56-slot dump of a four-warpgroup kernel")
        rows = {}
        for (cta, k), r in sorted(recs.items()):
            if r[4] == 0:
                continue
            prev = recs.get((cta, k - 1))
            for w in range(4):
                b = 4 + 12 * w
                q = r[qslot + w]
                if not q:
                    continue
                d = rows.setdefault(w if k % 2 == 0 else 3 - w, {})
                d.setdefault("issue_before_start", []).append(r[b] - q)
                d.setdefault("issue_to_qret", []).append(r[b + 1] - q)
                d.setdefault("start_to_qret", []).append(r[b + 1] - r[b])
                d.setdefault("firstS_to_lastPV", []).append(r[b + 4] - r[b + 3])
                if prev is not None and prev[4] and prev[b + 4]:
                    d.setdefault("issue_after_prevPV", []).append(q - prev[b + 4])
        print(f"## {path}")
        for rb in sorted(rows):
            print(f"rb {rb}: " + " ".join(f"{k}={statistics.fmean(x):.0f}" for k, x in rows[rb].items()))


if __name__ == "__main__":
    main(sys.argv[1:])
