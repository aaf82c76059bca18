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
import gzip
import statistics
import struct
import sys


def main(paths):
    for path in paths:
        raw = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
        grid, slots, max_tiles, _bm, _bn, wgs, _pers, _sk = struct.unpack("<8q", raw[:64])
        vals = struct.unpack(f"<{(len(raw) - 64) // 8}Q", raw[64:])
        qslot = 4 + 12 * 4
        if slots != 56 or wgs != 4:
            sys.exit(f"{path}: not a 56-slot dump of a four-warpgroup kernel")
        rows = {}
        for cta in range(grid):
            prev = None
            for k in range(max_tiles):
                r = vals[(cta * max_tiles + k) * slots:(cta * max_tiles + k + 1) * slots]
                if r[4] == 0:
                    prev = None
                    continue
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
                    if prev is not None and prev[b + 4]:
                        d.setdefault("issue_after_prevPV", []).append(q - prev[b + 4])
                prev = r
        print(f"## {path}")
        for rb in sorted(rows):
            print(f"rb {rb}: " + " ".join(f"{k}={statistics.fmean(x):.0f}" for k, x in rows[rb].items()))


if __name__ == "__main__":
    main(sys.argv[1:])
