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

    python3 wgq_protocol_model.py [STAGES] [RUNS]
"""
import random
import sys

W = 4  # consumer warpgroups


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


def run(tiles, mirror, stages, seed):
    rnd = random.Random(seed)
    mut = [0]
    bar = lambda n: MBar(n, mut)  # noqa: E731
    full_k, empty_k = [bar(1) for _ in range(stages)], [bar(W) for _ in range(stages)]
    full_v, empty_v = [bar(1) for _ in range(stages)], [bar(W) for _ in range(stages)]
    q_full, q_empty = [bar(1) for _ in range(W)], [bar(1) for _ in range(W)]
    t_full, t_empty = [bar(1) for _ in range(2)], [bar(W) for _ in range(2)]
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
                    if first(t, rb) != n:
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

    def consumer(c):
        ri, rph, qph, k = 0, 0, 0, 0

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
            for _ in range(blocks(t) - 1, n_max - 1, -1):  # the blocks its rows do not see
                yield from wait(full_k[ri], rph)
                empty_k[ri].arrive()
                yield from wait(full_v[ri], rph)
                empty_v[ri].arrive()
                ri, rph = advance(ri, rph)
            yield from wait(q_full[c], qph)
            qph ^= 1
            yield from wait(full_k[ri], rph)  # the first block: S only
            yield ("step", None)
            empty_k[ri].arrive()
            pi, pph = ri, rph
            ri, rph = advance(ri, rph)
            for _ in range(n_max - 2, -1, -1):  # S[n] with P V[n + 1]
                yield from wait(full_k[ri], rph)
                yield from wait(full_v[pi], pph)
                yield ("step", None)
                empty_k[ri].arrive()
                empty_v[pi].arrive()
                pi, pph = ri, rph
                ri, rph = advance(ri, rph)
            yield from wait(full_v[pi], pph)  # the last P V
            yield ("step", None)
            empty_v[pi].arrive()
            q_empty[c].arrive()
            yield ("step", None)  # epilogue
            k += 1

    procs = {"P": producer(), **{f"C{c}": consumer(c) for c in range(W)}}
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
        for n in sorted(alive, key=lambda n: rnd.random() ** (1.0 / speed[n]), reverse=True):
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
    stages = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    bad = 0
    for seed in range(runs):
        rnd = random.Random(1000 + seed)
        q_blocks = rnd.choice([2, 4])  # 512 or 1k keys
        tiles = [rnd.randrange(q_blocks) for _ in range(rnd.randrange(1, 12))]
        for mirror in (False, True):
            r = run(tiles, mirror, stages, seed)
            if r != "ok":
                bad += 1
                print(seed, tiles, "mirror" if mirror else "in order", r)
    print(f"stages {stages}: {2 * runs} runs, {bad} not ok")


if __name__ == "__main__":
    main()
