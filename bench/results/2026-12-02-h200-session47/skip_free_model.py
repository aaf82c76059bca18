#!/usr/bin/env python3
"""A CPU model of the SM90 forward's persistent CTA protocol for d 64's masked short tiles (4
consumer warpgroups of 4 warps, per-warpgroup key blocks, per-warpgroup Q, rows mirrored on odd
tiles), written in session 47 to check a change to how the key blocks a warpgroup skips are freed.
It extends session 35's model (bench/results/2026-11-28-h200-session35/wgq_protocol_model.py),
which looked for deadlocks only, with a check of every read: when a warpgroup's product reads a K
or V stage, that stage must hold the fill the warpgroup expects (the fill has landed and the stage
has not been refilled since). A parity wait that passes on an older phase would fail that check.

Modes of the skipped blocks' loop (the blocks past what a warpgroup's own rows see):
  sync  main's form (FLASHCUTE_SM90_FWD_SKIP_SYNC): per block, each warp waits for K and V to land,
        the warpgroup meets at a barrier, warp 0 frees both stages.
  free  the new form (FLASHCUTE_SM90_FWD_SKIP_FREE): the producer, right after it acquired a stage
        and issued its load, arrives on the stage's empty barrier once for every warpgroup that
        skips the block; each warp of a skipping warpgroup only waits for K and V to land (no
        barrier, no release).
  nowait  the free form without the skipping warps' waits (expected to fail the read check: a
        warpgroup's next parity wait can then pass on a fill two back).
  bare  main's form without the barrier (expected to deadlock: session 35's race).
  warp  per-warp arrivals (FLASHCUTE_SM90_FWD_SKIP_WARP): the empty barriers count 4 arrivals per
        warpgroup; a computed block's stage is freed by warp 0's thread 0 with 4 at once (after the
        product, where the warps met), a skipped block's by each warp after its own waits for K and
        V (no barrier).

Tiles: "causal" gives each warpgroup's rows the block ends of a causal diagonal (skips <= 3, as
d 64 causal with seqlen_q == seqlen_k); "random" gives each warpgroup any end in [1, blocks] with
one warpgroup at the top (warpgroups with no rows or whose rows see no key run one block, so skips
up to blocks - 1 > stages).

    python3 skip_free_model.py [STAGES] [RUNS]

Session 47's results (model-stages2.txt, model-stages4.txt): sync and warp 0 failures; free
deadlocks in 24-29% of runs; nowait stale reads in 28-45%; bare deadlocks in 15-21%.
"""
import importlib.util
import pathlib
import random
import sys

W = 4  # consumer warpgroups
WARPS = 4  # warps per warpgroup


# Session 35's mbarrier and warpgroup-barrier models, reused; the mbarrier here also takes count
# arrivals at once (mbarrier.arrive with a count: a computed stage freed for the warpgroup's 4 warps).
_S35 = pathlib.Path(__file__).resolve().parent.parent / "2026-11-28-h200-session35" / "wgq_protocol_model.py"
_spec = importlib.util.spec_from_file_location("wgq_protocol_model", _S35)
_s35 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_s35)
assert _s35.WARPS == WARPS
WgBarrier = _s35.WgBarrier


class MBar(_s35.MBar):
    def arrive(self, n=1):
        self.mut[0] += 1
        self.pending -= n
        self._check()


class StaleRead(Exception):
    pass


def run(tiles, stages, seed, mode):
    """tiles: list of (blocks, ends) with ends[rb] the block end of row block rb."""
    rnd = random.Random(seed)
    mut = [0]
    bar = lambda n: MBar(n, mut)  # noqa: E731
    per_wg = WARPS if mode == "warp" else 1  # empty-barrier arrivals per warpgroup
    full_k, empty_k = [bar(1) for _ in range(stages)], [bar(W * per_wg) for _ in range(stages)]
    full_v, empty_v = [bar(1) for _ in range(stages)], [bar(W * per_wg) for _ in range(stages)]
    # fills issued per stage (the data a stage holds once its last issued fill landed)
    q_full = [bar(1) for _ in range(W)]
    q_empty = [bar(WARPS) for _ in range(W)]
    t_full, t_empty = [bar(1) for _ in range(2)], [bar(W * WARPS) for _ in range(2)]
    wg_bar = [WgBarrier(mut) for _ in range(W)]
    slot, in_flight, end = [None, None], [], None

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
            blocks, ends = t
            odd = k & 1
            for n in range(blocks - 1, -1, -1):
                skippers = sum(1 for rb in range(W) if ends[rb] <= n)
                yield from wait(empty_k[wi], wph)
                tma(full_k[wi])
                if mode in ("free", "nowait") and skippers:
                    empty_k[wi].arrive(skippers)
                for c in range(W):
                    rb = W - 1 - c if odd else c
                    if ends[rb] - 1 != n:
                        continue
                    yield from wait(q_empty[c], ((q_loads >> c) & 1) ^ 1)
                    q_loads ^= 1 << c
                    tma(q_full[c])
                yield from wait(empty_v[wi], wph)
                tma(full_v[wi])
                if mode in ("free", "nowait") and skippers:
                    empty_v[wi].arrive(skippers)
                wi += 1
                if wi == stages:
                    wi, wph = 0, wph ^ 1
                yield ("step", None)

    def consumer(c, warp):
        # One warp of warpgroup c. Warp 0's thread 0 frees the K/V stages for the warpgroup
        # (kWgRelease); each product is a warpgroup-wide wgmma (.sync.aligned), modeled as a
        # warpgroup barrier; every warp arrives on the tile ring's and Q's empty barriers.
        # Ring position pos (0, 1, ..) is stage pos % stages, fill pos // stages of that stage.
        pos, qph, k = 0, 0, 0
        lead = warp == 0

        def release(b):
            if lead:
                b.arrive(per_wg)

        def stage(p):
            return p % stages, (p // stages) & 1

        def product(reads):
            # When a warp reaches the product (the warps meet in the wgmma), the stages it reads
            # must hold the fills the warpgroup expects: fill p // stages landed and nothing after
            # it (no refill can come before the warpgroup frees the stage, after the meeting).
            for bars, p in reads:
                i = p % stages
                if bars[i].phase != p // stages + 1:
                    raise StaleRead(f"warpgroup {c} reads stage {i} at fill {bars[i].phase - 1} "
                                    f"(landed), expected {p // stages}")
            # (No check after the meeting: warp 0 may free the stages and the producer refill them
            # before a slower warp resumes; the product itself ran when the last warp arrived.)
            yield from wg_bar[c].sync()

        while True:
            s = k & 1
            yield from wait(t_full[s], (k >> 1) & 1)
            t = slot[s]
            t_empty[s].arrive()
            if t is end:
                return
            blocks, ends = t
            rb = W - 1 - c if k & 1 else c
            n_max = ends[rb]
            for _ in range(blocks - 1, n_max - 1, -1):  # the blocks its rows do not see
                i, ph = stage(pos)
                if mode == "nowait":
                    pass
                elif mode == "warp":
                    yield from wait(full_k[i], ph)
                    yield from wait(full_v[i], ph)
                    empty_k[i].arrive()
                    empty_v[i].arrive()
                elif mode == "free":
                    yield from wait(full_k[i], ph)
                    yield from wait(full_v[i], ph)
                else:
                    yield from wait(full_k[i], ph)
                    if mode == "sync":
                        yield from wg_bar[c].sync()
                    release(empty_k[i])
                    yield from wait(full_v[i], ph)
                    if mode == "sync":
                        yield from wg_bar[c].sync()
                    release(empty_v[i])
                pos += 1
            yield from wait(q_full[c], qph)
            qph ^= 1
            i, ph = stage(pos)
            yield from wait(full_k[i], ph)  # the first block: S only
            yield from product([(full_k, pos)])
            release(empty_k[i])
            prev = pos
            pos += 1
            for _ in range(n_max - 2, -1, -1):  # S[n] with P V[n + 1]
                i, ph = stage(pos)
                pi, pph = stage(prev)
                yield from wait(full_k[i], ph)
                yield from wait(full_v[pi], pph)
                yield from product([(full_k, pos), (full_v, prev)])
                release(empty_k[i])
                release(empty_v[pi])
                prev = pos
                pos += 1
            pi, pph = stage(prev)
            yield from wait(full_v[pi], pph)  # the last P V
            yield from product([(full_v, prev)])
            release(empty_v[pi])
            q_empty[c].arrive()
            yield ("step", None)  # epilogue
            k += 1

    procs = {"P": producer(), **{f"C{c}w{w}": consumer(c, w) for c in range(W) for w in range(WARPS)}}
    speed = {n: rnd.choice([0.05, 0.3, 1, 3, 20]) for n in procs}
    land_p = rnd.choice([0.02, 0.3, 0.9])
    alive, last = set(procs), {}
    try:
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
            return "deadlock"
    except StaleRead as e:
        return "stale read: " + str(e)
    return "too long"


def make_tiles(rnd, kind):
    tiles = []
    for _ in range(rnd.randrange(1, 12)):
        if kind == "causal":
            m = rnd.randrange(rnd.choice([2, 4]))  # query block of a 512- or 1k-key problem
            blocks = 4 * (m + 1)
            ends = [min(4 * m + rb + 1, blocks) for rb in range(W)]
        else:
            blocks = rnd.randrange(1, 13)
            ends = [rnd.randrange(1, blocks + 1) for _ in range(W)]
            ends[rnd.randrange(W)] = blocks
        tiles.append((blocks, ends))
    return tiles


def main():
    stages = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    for mode in ("sync", "warp", "free", "nowait", "bare"):
        for kind in ("causal", "random"):
            results = {}
            for seed in range(runs):
                rnd = random.Random(7000 + seed)
                r = run(make_tiles(rnd, kind), stages, seed, mode)
                key = r.split(":")[0]
                results[key] = results.get(key, 0) + 1
            print(f"stages {stages}, mode {mode:6s}, tiles {kind:6s}: {runs} runs: "
                  + ", ".join(f"{v} {k}" for k, v in sorted(results.items())))


if __name__ == "__main__":
    main()
