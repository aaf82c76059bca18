#!/usr/bin/env python3
"""Per-tile timeline of the SM90 forward from a probe build's stamps.

A build with -DFLASHCUTE_SM90_FWD_TIMELINE=1 (in FLASHCUTE_SM90_FLAGS) has every SM90 forward kernel
write clock64 stamps at a handful of points of each tile (src/sm90/tile_config.h): the producer
thread at the tile's start, after issuing Q and after issuing the last V; each consumer
warpgroup's first thread at the tile's start, when its wait for Q returned, after issuing the
first S = Q K^T, when it completed, when the last P V completed and when the epilogue is done;
dumps with 12 slots per warpgroup (32 a tile, since session 29) add stamps inside the epilogue (LSE
stored, sO's WAR barrier passed, O in smem, O's barrier passed) and the tile index's read from the
ring, before the tile's start. Since session 36 a tile has 56 slots: four consumer warpgroups (32-slot
dumps hold two), and in kernels with per-warpgroup Q the producer's issue of each warpgroup's slice
in the last four. The launcher dumps them to $FLASHCUTE_TIMELINE_OUT after every launch
(the last launch's stay).

    FLASHCUTE_TIMELINE_OUT=t.bin flashcute bench --d 128 --seqlen 512 --causal false --iters 3 ...
    python3 bench/tile_timeline.py t.bin [--md out.md]

Reports, per consumer warpgroup, the mean cycles of each phase of a tile and of the gap between a
tile's end and the next one's start on the same CTA (persistent) or SM (one tile per CTA; CTAs on
one SM share its clock), and where the producer issued Q against the consumers' tile start.
"""

import argparse
import gzip
import statistics
import struct
import sys

PHASES = [("tile start -> Q wait returned", 0, 1), ("Q wait returned -> first S issued", 1, 2),
          ("first S issued -> complete", 2, 3), ("first S complete -> last P V complete", 3, 4),
          ("last P V complete -> epilogue done", 4, 5)]
# With 12 slots per warpgroup: the epilogue's parts (slot 10, sO's WAR barrier, only where O has its
# own smem) and the ring's read (slot 9) of the same tile.
EPILOGUE_PHASES = [("  last P V complete -> finalize, LSE stored", 4, 6), ("  LSE stored -> sO's WAR barrier passed", 6, 10),
                   ("  -> O in smem (stmatrix issued)", (10, 6), 7), ("  O in smem -> O's barrier passed", 7, 8),
                   ("  O's barrier passed -> epilogue done (TMA store issued)", 8, 5),
                   ("tile index read from the ring -> tile start (decode, tile set-up)", 9, 0)]


# The producer's Q-slice stamps: one per consumer warpgroup of the four a 56-slot dump has room for.
Q_SLICES = 4


def wg_stride(slots):
    """Slots per consumer warpgroup: 6 in 16-slot dumps, 12 in 32-slot ones."""
    return 6 if slots <= 16 else 12


def recorded_wgs(meta):
    """Consumer warpgroups with stamps in this dump (2 in 16- and 32-slot dumps, 4 in 56-slot ones)."""
    return min(meta["wgs"], (meta["slots"] - 4) // wg_stride(meta["slots"]))


def load(path):
    """(meta, {(cta, k): stamps}) of a dump; a name ending in .gz is read through gzip."""
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        head = struct.unpack("<8q", f.read(64))
        grid, slots, max_tiles, block_m, block_n, wgs, persistent, seqlen_k = head
        data = f.read()
    n = len(data) // 8
    vals = struct.unpack(f"<{n}Q", data)
    recs = {}
    for cta in range(grid):
        for k in range(max_tiles):
            base = (cta * max_tiles + k) * slots
            rec = vals[base:base + slots]
            if rec[0] == 0 and rec[4] == 0:
                continue
            recs[(cta, k)] = rec
    return dict(grid=grid, slots=slots, max_tiles=max_tiles, block_m=block_m, block_n=block_n, wgs=wgs,
                persistent=bool(persistent), seqlen_k=seqlen_k), recs


def mean(xs):
    return statistics.fmean(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bin")
    ap.add_argument("--md", help="write the table here too")
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    meta, recs = load(a.bin)
    lines = [f"### {a.label or a.bin}", "",
             f"grid {meta['grid']}, block {meta['block_m']} x {meta['block_n']}, {meta['wgs']} consumer warpgroups, "
             f"{'persistent' if meta['persistent'] else 'one tile per CTA'}, seqlen_k {meta['seqlen_k']}, "
             f"{len(recs)} tiles recorded (clock64 cycles)", ""]
    nw = recorded_wgs(meta)
    lines += ["| phase | " + " | ".join(f"warpgroup {w}" for w in range(nw)) + " |", "|---|" + "---|" * nw]
    stride = wg_stride(meta["slots"])
    phases = PHASES + (EPILOGUE_PHASES if stride >= 12 else [])
    for name, s0, s1 in phases:
        cells = []
        for w in range(nw):
            base = 4 + stride * w
            xs = []
            for r in recs.values():
                start = next((r[base + s] for s in (s0 if isinstance(s0, tuple) else (s0,)) if r[base + s]), 0)
                if start and r[base + s1]:
                    xs.append(r[base + s1] - start)
            cells.append(f"{mean(xs):.0f}" if xs else "-")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    # tile span and the gap to the next tile of the same CTA (persistent) or SM (one tile per CTA)
    for w in range(nw):
        base = 4 + stride * w
        spans = [r[base + 5] - r[base] for r in recs.values() if r[base] and r[base + 5]]
        lines.append(f"| warpgroup {w}: tile start -> epilogue done | {mean(spans):.0f} |")
    gaps = {w: [] for w in range(nw)}
    ring = {w: [] for w in range(nw)}  # epilogue done -> the next tile's index read from the ring
    if meta["persistent"]:
        for (cta, k), r in recs.items():
            nxt = recs.get((cta, k + 1))
            if nxt is None:
                continue
            for w in range(nw):
                base = 4 + stride * w
                if r[base + 5] and nxt[base]:
                    gaps[w].append(nxt[base] - r[base + 5])
                if stride >= 12 and r[base + 5] and nxt[base + 9]:
                    ring[w].append(nxt[base + 9] - r[base + 5])
    else:
        by_sm = {}
        for (cta, k), r in recs.items():
            by_sm.setdefault(r[3], []).append(r)
        for rs in by_sm.values():
            for w in range(nw):
                base = 4 + stride * w
                seq = sorted((r for r in rs if r[base] and r[base + 5]), key=lambda r: r[base])
                for r0, r1 in zip(seq, seq[1:]):
                    gaps[w].append(r1[base] - r0[base + 5])
    for w in range(nw):
        lines.append(f"| warpgroup {w}: epilogue done -> next tile's start ({'CTA' if meta['persistent'] else 'SM'}) "
                     f"| {mean(gaps[w]):.0f} |")
        if ring[w]:
            lines.append(f"| warpgroup {w}: epilogue done -> next tile's index read from the ring | {mean(ring[w]):.0f} |")
    # Persistent: each warpgroup's share of its CTA's span (first tile start -> last epilogue done)
    # between its Q wait's return and its last P V's completion, summed over the CTA's tiles; the rest
    # is the skip loop, waits for Q and the ring, the epilogue and the gaps between tiles.
    if meta["persistent"]:
        by_cta = {}
        for (cta, _k), r in recs.items():
            by_cta.setdefault(cta, []).append(r)
        for w in range(nw):
            base = 4 + stride * w
            shares = []
            for rs in by_cta.values():
                rs = [r for r in rs if r[base] and r[base + 5] and r[base + 1] and r[base + 4]]
                if not rs:
                    continue
                span = max(r[base + 5] for r in rs) - min(r[base] for r in rs)
                if span > 0:
                    shares.append(sum(r[base + 4] - r[base + 1] for r in rs) / span)
            lines.append(f"| warpgroup {w}: Q wait returned -> last P V complete, share of the CTA's span | "
                         f"{mean(shares):.3f} |")
    # Per-warpgroup Q (56-slot dumps of kWgQ kernels): the producer's issue of warpgroup w's slice,
    # held in the last four slots (after four warpgroups' slots, however many recorded stamps),
    # against that warpgroup's tile start and its Q wait's return.
    qslot = 4 + stride * Q_SLICES
    if meta["slots"] >= qslot + Q_SLICES:
        for w in range(nw):
            base = 4 + stride * w
            lead = [r[base] - r[qslot + w] for r in recs.values() if r[qslot + w] and r[base]]
            land = [r[base + 1] - r[qslot + w] for r in recs.values() if r[qslot + w] and r[base + 1]]
            if lead:
                lines.append(f"| producer: warpgroup {w}'s Q slice issued before its tile start | {mean(lead):.0f} |")
                lines.append(f"| producer: warpgroup {w}'s Q slice issued -> its Q wait returned | {mean(land):.0f} |")
    # producer: Q issue and last V issue against warpgroup 0's tile start
    q_lead = [r[4] - r[1] for r in recs.values() if r[1] and r[4]]
    v_end = [r[8] - r[2] for r in recs.values() if r[2] and r[8]]  # slot 8 = 4 + 4: warpgroup 0's last P V
    lines.append(f"| producer: Q issued before warpgroup 0's tile start | {mean(q_lead):.0f} |")
    lines.append(f"| producer: last V issued before warpgroup 0's last P V complete | {mean(v_end):.0f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.md:
        with open(a.md, "a") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
