#!/usr/bin/env python3
"""A CPU model of the SM90 forward's persistent CTA protocol with per-warpgroup Q (tile_config.h,
FLASHCUTE_SM90_FWD_WG_Q=1 and =2), written in session 35 to look for the deadlock that
compute-sanitizer's hangs suggested. It models one CTA of d 64's masked short tiles (4 consumer
warpgroups, 256-row tiles, 64-key blocks, causal with seqlen_q = seqlen_k) at the granularity of
whole warpgroups: the producer thread, the K/V ring (full / empty mbarriers per stage, one release
per warpgroup), the two-slot tile ring, Q's full / empty mbarriers per warpgroup, TMA landings at
random later times, and mbarrier try_wait.parity semantics (a wait for parity P passes while the
barrier's current phase parity differs from P). Each run picks a random tile sequence (m_block per
tile) and random speeds per process; a state where no process can move and no TMA is in flight is
reported as a deadlock.

    python3 wgq_protocol_model.py [STAGES] [RUNS] [WARPS]

Session 35's first version modeled whole warpgroups and found nothing. At the granularity of
warps (WARPS = 4, the default) it finds the hang: in the loop over the key blocks a warpgroup's rows
do not see, warp 0 frees each stage as soon as it has seen the stage land, while the other three
warps may not have waited for it yet. Where that free is the stage's last (the others already
computed the block: with the reversed rows, the skipping warpgroup is the one that ran late on the
previous tile), the producer refills the stage, and a lagging warp's parity wait then refers to a
phase two fills back: it waits for the fill after (try_wait.parity cannot tell phases two apart).
`skip_sync` (a warpgroup barrier before each of those frees) removes it. The model finds the same
race in the one-Q kernel (wg_q=False, FLASHCUTE_SM90_FWD_WG_Q=0), where it needs larger drift
between a warpgroup's warps (all warpgroups meet at Q at each tile's start); on the GPU it was seen
only with the reversed rows, under compute-sanitizer.
"""
import random
import sys

W = 4  # consumer warpgroups
WARPS = 4  # warps per warpgroup (1: whole-warpgroup granularity)


class MBar:
    def __init__(self, count, mut):
        self.count, self.pending, self.tx, self.phase, self.mut = count, count, 0, 0, mut

    def arrive(self):
        self.mut[0] += 1
        self.pending -= 1
        self._check()

    def expect_tx(self, n):
        self.tx += n

    def land(self, n):
        self.mut[0] += 1
        self.tx -= n
        self._check()

    def _check(self):
        assert self.pending >= 0, "more arrivals than the count"
        if self.pending == 0 and self.tx == 0:
            self.phase += 1
            self.pending = self.count

    def passes(self, parity):
        return (self.phase & 1) != parity


class WgBarrier:
    """bar.sync of one warpgroup's warps (a named barrier, or wgmma's .sync.aligned)."""

    def __init__(self, mut):
        self.arrived, self.generation, self.mut = 0, 0, mut

    def sync(self):
        gen = self.generation
        self.arrived += 1
        self.mut[0] += 1
        if self.arrived == WARPS:
            self.arrived, self.generation = 0, self.generation + 1
        while self.generation == gen:
            yield ("wait", self)


def run(tiles, mirror, stages, seed, skip_sync, wg_q=True):
    rnd = random.Random(seed)
    mut = [0]
    bar = lambda n: MBar(n, mut)  # noqa: E731
    full_k, empty_k = [bar(1) for _ in range(stages)], [bar(W) for _ in range(stages)]
    full_v, empty_v = [bar(1) for _ in range(stages)], [bar(W) for _ in range(stages)]
    # wg_q=False: one Q for the CTA (FLASHCUTE_SM90_FWD_WG_Q=0), loaded after the tile's first K and
    # freed by every consumer thread.
    q_full = [bar(1) for _ in range(W)] if wg_q else [bar(1)] * W
    q_empty = [bar(WARPS) for _ in range(W)] if wg_q else [bar(W * WARPS)] * W
    t_full, t_empty = [bar(1) for _ in range(2)], [bar(W * WARPS) for _ in range(2)]
    wg_bar = [WgBarrier(mut) for _ in range(W)]
    slot, in_flight, end = [None, None], [], None

    def blocks(m):  # key blocks of query block m
        return 4 * (m + 1)

    def first(m, rb):  # first (highest) block of the 64 rows rb: wg_block_end - 1
        return min(4 * m + rb + 1, blocks(m)) - 1

    def tma(b):
        b.expect_tx(1)
        b.arrive()
        in_flight.append(b)

    def wait(b, parity):
        while not b.passes(parity):
            yield ("wait", b)

    def producer():
        wi, wph, q_loads = 0, 1, 0  # CUTLASS's producer start state: phase 1
        for k, t in enumerate(tiles + [end]):
            s = k & 1
            yield from wait(t_empty[s], ((k >> 1) & 1) ^ 1)
            slot[s] = t
            t_full[s].arrive()
            if t is end:
                return
            odd = mirror and (k & 1)
            for n in range(blocks(t) - 1, -1, -1):
                yield from wait(empty_k[wi], wph)
                tma(full_k[wi])
                for c in range(W):
                    rb = W - 1 - c if odd else c
                    if (first(t, rb) if wg_q else (blocks(t) - 1 if c == 0 else -1)) != n:
                        continue
                    yield from wait(q_empty[c], ((q_loads >> c) & 1) ^ 1)
                    q_loads ^= 1 << c
                    tma(q_full[c])
                yield from wait(empty_v[wi], wph)
                tma(full_v[wi])
                wi += 1
                if wi == stages:
                    wi, wph = 0, wph ^ 1
                yield ("step", None)

    def consumer(c, warp):
        # One warp of warpgroup c. Warp 0's thread 0 frees the K/V stages for the warpgroup
        # (kWgRelease); each product is a warpgroup-wide wgmma (.sync.aligned), modeled as a
        # warpgroup barrier; every warp arrives on the tile ring's and Q's empty barriers.
        ri, rph, qph, k = 0, 0, 0, 0
        lead = warp == 0

        def release(b):
            if lead:
                b.arrive()

        def product():
            yield from wg_bar[c].sync()

        def advance(i, ph):
            i += 1
            return (0, ph ^ 1) if i == stages else (i, ph)

        while True:
            s = k & 1
            yield from wait(t_full[s], (k >> 1) & 1)
            t = slot[s]
            t_empty[s].arrive()
            if t is end:
                return
            rb = W - 1 - c if mirror and (k & 1) else c
            n_max = first(t, rb) + 1
            if not wg_q:
                yield from wait(q_full[c], qph)
                qph ^= 1
            for _ in range(blocks(t) - 1, n_max - 1, -1):  # the blocks its rows do not see
                yield from wait(full_k[ri], rph)
                if skip_sync:
                    yield from wg_bar[c].sync()
                release(empty_k[ri])
                yield from wait(full_v[ri], rph)
                if skip_sync:
                    yield from wg_bar[c].sync()
                release(empty_v[ri])
                ri, rph = advance(ri, rph)
            if wg_q:
                yield from wait(q_full[c], qph)
                qph ^= 1
            yield from wait(full_k[ri], rph)  # the first block: S only
            yield from product()
            release(empty_k[ri])
            pi, pph = ri, rph
            ri, rph = advance(ri, rph)
            for _ in range(n_max - 2, -1, -1):  # S[n] with P V[n + 1]
                yield from wait(full_k[ri], rph)
                yield from wait(full_v[pi], pph)
                yield from product()
                release(empty_k[ri])
                release(empty_v[pi])
                pi, pph = ri, rph
                ri, rph = advance(ri, rph)
            yield from wait(full_v[pi], pph)  # the last P V
            yield from product()
            release(empty_v[pi])
            q_empty[c].arrive()
            yield ("step", None)  # epilogue
            k += 1

    procs = {"P": producer(), **{f"C{c}w{w}": consumer(c, w) for c in range(W) for w in range(WARPS)}}
    speed = {n: rnd.choice([0.05, 0.3, 1, 3, 20]) for n in procs}
    land_p = rnd.choice([0.02, 0.3, 0.9])
    alive, last = set(procs), {}
    for _ in range(2_000_000):
        if not alive:
            return "ok"
        if in_flight and rnd.random() < land_p:
            in_flight.pop(rnd.randrange(len(in_flight))).land(1)
            continue
        before, moved = mut[0], False
        for n in sorted(sorted(alive), key=lambda n: rnd.random() ** (1.0 / speed[n]), reverse=True):
            try:
                last[n] = next(procs[n])
            except StopIteration:
                alive.discard(n)
                moved = True
                break
            if last[n][0] != "wait":
                moved = True
                break
        if moved or mut[0] != before:
            continue
        if in_flight:
            in_flight.pop(rnd.randrange(len(in_flight))).land(1)
            continue
        return "deadlock: " + ", ".join(sorted(alive))
    return "too long"


def main():
    global WARPS
    stages = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    WARPS = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    for skip_sync in (False, True):
        for wg_q, mirror in ((False, False), (True, False), (True, True)):
            bad = 0
            for seed in range(runs):
                rnd = random.Random(1000 + seed)
                q_blocks = rnd.choice([2, 4])  # 512 or 1k keys
                tiles = [rnd.randrange(q_blocks) for _ in range(rnd.randrange(1, 12))]
                r = run(tiles, mirror, stages, seed, skip_sync, wg_q)
                if r != "ok":
                    bad += 1
            mode = "one Q" if not wg_q else "Q per warpgroup, " + ("rows reversed on odd tiles" if mirror else "rows in order")
            print(f"stages {stages}, warps {WARPS}, {mode}, "
                  f"warpgroup barrier in the skip loop: {'yes' if skip_sync else 'no'}: {runs} runs, {bad} not ok")


if __name__ == "__main__":
    main()
