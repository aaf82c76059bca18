"""The benchmark grid of docs/BENCHMARKING.md, its FLOP counts and a run-time estimate (no torch).

Grid: dtype bf16, fp16; head dim d 64, 128, 256; seqlen 512 .. 16k with batch = 16384 / seqlen and
heads = 2048 / d (16k tokens, hidden 2048); causal and not; passes fwd, bwd, fwd+bwd.

FLOPs (the FlashAttention papers' convention, one formula for the whole project):
    fwd     = 2 * (d + d_v) * batch * heads * seqlen_q * seqlen_k   (4 * ... * d when d == d_v),
              halved for causal when seqlen_q == seqlen_k
    bwd     = 2.5 * fwd
    fwd+bwd = 3.5 * fwd
"""
import subprocess

TOKENS, HIDDEN = 16384, 2048
DTYPES = ("bf16", "fp16")
HEAD_DIMS = (64, 128, 256)
SEQLENS = (512, 1024, 2048, 4096, 8192, 16384)
PASSES = ("fwd", "bwd", "fwd+bwd")
PASS_ALIASES = {"fwd": "fwd", "bwd": "bwd", "fwd+bwd": "fwd+bwd", "fwdbwd": "fwd+bwd", "fb": "fwd+bwd"}
PASS_FACTOR = {"fwd": 1.0, "bwd": 2.5, "fwd+bwd": 3.5}

# --quick: under 3 minutes on an H100 (see estimate_seconds); no FlexAttention (compiles per shape).
QUICK = {"dtypes": ("bf16",), "head_dims": (64, 128), "seqlens": (2048, 8192), "causal": (False, True),
         "passes": PASSES}


def fwd_flops(batch, heads, seqlen_q, seqlen_k, d, d_v=None, causal=False):
    """Forward FLOPs of dense attention as BENCHMARKING.md counts them (an int)."""
    d_v = d if d_v is None else d_v
    flops = 2 * (d + d_v) * batch * heads * seqlen_q * seqlen_k
    return flops // 2 if causal and seqlen_q == seqlen_k else flops


def pass_flops(case, pass_name):
    """FLOPs of one call of `pass_name` ("fwd", "bwd", "fwd+bwd") on `case` (a dict from make_cases)."""
    f = fwd_flops(case["batch"], case["heads"], case["seqlen"], case["seqlen"], case["d"], causal=case["causal"])
    return f * PASS_FACTOR[pass_name]


def tflops(flops, ms):
    """TFLOP/s of `flops` done in `ms` milliseconds (None when ms is missing or not positive)."""
    return flops / (ms * 1e-3) / 1e12 if ms and ms > 0 else None


def shape_for(seqlen, d):
    """(batch, heads) of the grid for this seqlen and head dim."""
    if TOKENS % seqlen or HIDDEN % d:
        raise ValueError(f"seqlen {seqlen} must divide {TOKENS} and d {d} must divide {HIDDEN}")
    return TOKENS // seqlen, HIDDEN // d


def make_cases(dtypes, head_dims, seqlens, causals):
    """One dict per (dtype, d, causal, seqlen), in the order tables list them."""
    cases = []
    for dt in dtypes:
        for d in head_dims:
            for causal in causals:
                for s in seqlens:
                    batch, heads = shape_for(s, d)
                    cases.append(dict(dtype=dt, d=d, causal=causal, seqlen=s, batch=batch, heads=heads))
    return cases


def parse_list(text, kind, allowed=None):
    """'a,b' -> list, converting with `kind` and checking against `allowed` (ValueError names the bad item)."""
    out = []
    for item in (x.strip() for x in str(text).split(",")):
        if not item:
            continue
        value = kind(item)
        if allowed is not None and value not in allowed:
            raise ValueError(f"'{item}' is not one of {', '.join(map(str, allowed))}")
        out.append(value)
    return out


def parse_passes(text):
    out = []
    for item in parse_list(text, str):
        if item not in PASS_ALIASES:
            raise ValueError(f"'{item}' is not a pass (fwd, bwd, fwd+bwd)")
        if PASS_ALIASES[item] not in out:
            out.append(PASS_ALIASES[item])
    return out


def parse_causal(text):
    table = {"both": [False, True], "true": [True], "yes": [True], "1": [True], "causal": [True],
             "false": [False], "no": [False], "0": [False], "full": [False]}
    key = str(text).strip().lower()
    if key not in table:
        raise ValueError(f"'{text}' is not both, true or false")
    return table[key]


# ---- run-time estimate --------------------------------------------------------------------------------
# Rough H100 TFLOP/s per implementation (forward; backward is slower per FLOP) and the fixed costs of a
# first call: a guess for planning GPU time, printed before the run, never a result.
_RATE = {"flashcute_sm80": 280, "flashcute_sm90": 450, "sdpa_flash": 300, "sdpa_cudnn": 450, "sdpa_efficient": 150,
         "sdpa_math": 25, "flex": 350, "flash_attn": 300, "fa3": 500}
# cuDNN builds a plan per shape; FlexAttention compiles per shape and grad mode (the bwd pass reuses the
# graphs compiled for fwd+bwd).
_FIRST_CALL_S = {("sdpa_cudnn", "fwd"): 0.3, ("sdpa_cudnn", "bwd"): 0.3, ("sdpa_cudnn", "fwd+bwd"): 0.3,
                 ("flex", "fwd"): 4.0, ("flex", "fwd+bwd"): 8.0, ("flex", "bwd"): 1.0}
_OVERHEAD_S = 0.05  # Python, events, synchronizations per measurement


def calls_per_measurement(ms, warmup, rep_ms, min_reps, max_reps, rounds=3):
    """Calls one measurement makes: 1 memory/spot-check call, then `rounds` interleaved rounds of timed reps
    (rep_ms / rounds each), after `warmup` calls in the first round and 1 in each later one."""
    rounds = max(1, rounds)
    reps = max(min_reps, min(max_reps, int(rep_ms / rounds / max(ms, 1e-3))))
    return 1 + warmup + (rounds - 1) + rounds * reps


def estimate_seconds(cases, passes, impls, warmup=3, rep_ms=100.0, min_reps=5, max_reps=30, math_max_seqlen=4096,
                     rounds=3):
    """Expected wall time of the run in seconds (GPU work + first-call costs), and per-pass details."""
    total = 0.0
    for case in cases:
        for p in passes:
            flops = pass_flops(case, p)
            for impl in impls:
                if impl == "sdpa_math" and case["seqlen"] > math_max_seqlen:
                    continue
                rate = _RATE.get(impl, 200) * (0.8 if p != "fwd" else 1.0) * (0.5 if case["seqlen"] <= 1024 else 1.0)
                ms = flops / (rate * 1e12) * 1e3
                n = calls_per_measurement(ms, warmup, rep_ms, min_reps, max_reps, rounds)
                total += n * ms * 1e-3 + _OVERHEAD_S + _FIRST_CALL_S.get((impl, p), 0.0)
    return total + 20.0 + 0.5 * len(cases)  # torch import + CUDA init; inputs per case


def git_revision(repo):
    """The short commit of the tree at `repo`, with "+dirty" where its tracked files differ from that
    commit (local edits, or a copied tree whose .git is older than its files), so that a hash is never
    taken for code that did not run; None where git or the repository is missing."""
    try:
        rev = subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             timeout=10).stdout.strip() or None
        changed = subprocess.run(["git", "-C", repo, "status", "--porcelain", "--untracked-files=no"],
                                 capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return rev + "+dirty" if rev and changed else rev
