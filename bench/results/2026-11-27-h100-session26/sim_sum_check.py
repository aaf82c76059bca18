"""How often the sum check's slow path runs (a simulation of the reference dynamics, not the kernel).

One d 128 query block of 128 rows, q, k ~ N(0, 1) in bf16-free float64 (flashcute bench's inputs),
softmax scale 1/sqrt(d); key blocks of 128 from the diagonal (causal) or the last (non-causal) down to
0. The first block sets each row's reference to its max (update<kFirst>); later boundary blocks (the
causal diagonal is the only one) never occur here; every later block is interior and runs the sum
check: each thread's (2 rows x 32 columns of the wgmma layout) row sums of p = 2^((s - ref) mult) must
be <= 2^7 for the warp's fast path. On the slow path a row moves its reference to its block max when
the rule says so. Counts warp-blocks on the slow path.
"""
import numpy as np

def run(rule, causal, n_blocks=64, seed=0, trials=20):
    rng = np.random.default_rng(seed)
    d, bm, bn = 128, 128, 128
    mult = (1 / np.sqrt(d)) * np.log2(np.e)
    slow = total = 0
    for _ in range(trials):
        q = rng.standard_normal((bm, d))
        k = rng.standard_normal((n_blocks * bn, d))
        s = q @ k.T  # raw scores
        row0 = (n_blocks - 1) * bm  # the query block at the end: its diagonal is key block n_blocks - 1
        rows = row0 + np.arange(bm)
        keys = np.arange(n_blocks * bn)
        if causal:
            s = np.where(keys[None, :] <= rows[:, None], s, -np.inf)
        blk = lambda n: s[:, n * bn:(n + 1) * bn]
        ref = blk(n_blocks - 1).max(axis=1)  # first block: the rows' maxima
        cols = np.array([[8 * j + 2 * t + e for j in range(16) for e in (0, 1)] for t in range(4)])
        for n in range(n_blocks - 2, -1, -1):
            x = (blk(n) - ref[:, None]) * mult
            p = np.exp2(x)
            # warps of 16 rows: thread (quad g, lane t) holds rows 16w + g, 16w + g + 8 and columns cols[t]
            for w in range(bm // 16):
                r = 16 * w + np.arange(16)
                sums = np.stack([p[r][:, cols[t]].sum(axis=1) for t in range(4)])  # (4, 16)
                total += 1
                if (sums <= 128).all():
                    continue
                slow += 1
                pm = p[r].max(axis=1)
                move = pm > (256.0 if rule == "threshold" else 1.0)
                ref[r] = np.where(move, ref[r] + np.log2(pm) / mult, ref[r])
    return slow, total

for causal in (False, True):
    for rule in ("threshold", "any growth"):
        sl, tot = run(rule, causal)
        print(f"causal={causal!s:5} move rule: {rule:10}  slow warp-blocks {sl} of {tot} ({100 * sl / tot:.2f}%)")
