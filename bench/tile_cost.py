#!/usr/bin/env python3
"""Per-tile fixed cost against per-key cost: our SM90 forward (a prebuilt `flashcute` binary's `run`)
and cuDNN (SDPA's cuDNN backend) on the same shapes, with seqlen_q fixed and seqlen_k swept.

With T tiles of block_m query rows on S SMs, a launch takes about waves x (fixed + seqlen_k x per_key),
waves = T / S; a least-squares line of time against seqlen_k gives both terms per wave (each
implementation's own tile is unknown for cuDNN, so the terms are per wave of the same T / S, i.e.
per 128 query rows at d 128 / 256 for ours). Medians of --iters CUDA-event timed launches, no L2
flush, so the rows are short-segment numbers (perf-notes, sessions 15-16), good for the shape of the
line rather than its last percent.

    python3 bench/tile_cost.py --bin ab-bin/base/flashcute --d 128 --seqlen-q 512 --seqlen-k 128,256,512,1024

--flush-ab: instead, BENCHMARKING.md's shapes (seqlen_q = seqlen_k = each of --seqlen-k) with and
without the 256 MB memset before every launch that bench.py and `flashcute bench` use for a cold L2:
ours through `flashcute bench` (its --no-flush), cuDNN on bench.py's (batch, heads, seqlen, d) views of
(batch, seqlen, heads, d) tensors.
"""
import csv
import os
import tempfile
import argparse
import re
import subprocess

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def ours(binary, d, b, h, sq, sk, causal, iters):
    cmd = [binary, "run", "--backend", "sm90", "--dtype", "bf16", "--d", str(d), "--batch", str(b), "--heads", str(h),
           "--seqlen-q", str(sq), "--seqlen-k", str(sk), "--check-heads", "0", "--iters", str(iters)]
    if causal:
        cmd.append("--causal")
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout
    m = re.search(r"time ([0-9.]+) ms", out)
    if not m:
        raise RuntimeError(out)
    return float(m.group(1))


def timed(call, iters, flush_buf):
    """Median CUDA-event time of `iters` queued calls (bench.py's way: a GPU sleep first so the CPU runs
    ahead and its per-call overhead stays outside the timed spans; an event sync per call would time it)."""
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    torch.cuda._sleep(10_000_000)
    for i in range(iters):
        if flush_buf is not None:
            flush_buf.zero_()
        starts[i].record()
        call()
        ends[i].record()
    torch.cuda.synchronize()
    times = sorted(st.elapsed_time(e) for st, e in zip(starts, ends))
    return times[len(times) // 2]


def cudnn(d, b, h, sq, sk, causal, iters):
    q = torch.randn(b, h, sq, d, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(b, h, sk, d, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(b, h, sk, d, device="cuda", dtype=torch.bfloat16)
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        return timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), iters, None)


def ours_bench(binary, d, sk, causal, iters, flush):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "r.csv")
        cmd = [binary, "bench", "--backend", "sm90", "--dtype", "bf16", "--d", str(d), "--seqlen", str(sk), "--pass",
               "fwd", "--causal", "true" if causal else "false", "--iters", str(iters), "--csv", path]
        if not flush:
            cmd.append("--no-flush")
        subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)
        with open(path) as f:
            return float(next(csv.DictReader(f))["ms"])


def cudnn_bshd(d, b, h, s, causal, iters, flush_buf):
    q, k, v = (torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        return timed(lambda: F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                            is_causal=causal), iters, flush_buf)


def flush_ab(a):
    flush_buf = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    print(f"d {a.d}, causal {a.causal}, bf16, tokens {a.tokens}: median ms of {a.iters} launches, L2 flushed or not")
    print("| seqlen | ours flush | cuDNN flush | ours / cuDNN time, flush | ours no flush | cuDNN no flush | "
          "ours / cuDNN time, no flush |")
    print("|---|---|---|---|---|---|---|")
    for s in (int(x) for x in a.seqlen_k.split(",")):
        b, h = a.tokens // s, 2048 // a.d
        of, onf = (ours_bench(a.bin, a.d, s, a.causal, a.iters, fl) for fl in (True, False))
        cf, cnf = cudnn_bshd(a.d, b, h, s, a.causal, a.iters, flush_buf), cudnn_bshd(a.d, b, h, s, a.causal, a.iters, None)
        print(f"| {s} | {of:.4f} | {cf:.4f} | {of / cf:.3f} | {onf:.4f} | {cnf:.4f} | {onf / cnf:.3f} |")


def fit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - slope * mx, slope


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--seqlen-q", type=int, default=512)
    ap.add_argument("--seqlen-k", default="128,256,512,1024")
    ap.add_argument("--tokens", type=int, default=16384, help="batch = tokens / seqlen_q")
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--flush-ab", action="store_true")
    a = ap.parse_args()
    if a.flush_ab:
        flush_ab(a)
        return
    b, h = a.tokens // a.seqlen_q, 2048 // a.d
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    waves = b * h * ((a.seqlen_q + 127) // 128) / sms
    sks = [int(x) for x in a.seqlen_k.split(",")]
    rows = []
    for sk in sks:
        rows.append((sk, ours(a.bin, a.d, b, h, a.seqlen_q, sk, a.causal, a.iters),
                     cudnn(a.d, b, h, a.seqlen_q, sk, a.causal, a.iters)))
    print(f"d {a.d}, batch {b}, heads {h}, seqlen_q {a.seqlen_q}, causal {a.causal}, bf16; "
          f"{waves:.2f} waves of 128-row tiles on {sms} SMs")
    print("| seqlen_k | ours ms | cuDNN ms | ours / cuDNN time |")
    print("|---|---|---|---|")
    for sk, o, c in rows:
        print(f"| {sk} | {o:.4f} | {c:.4f} | {o / c:.3f} |")
    for name, i in (("ours", 1), ("cuDNN", 2)):
        a0, s = fit([r[0] for r in rows], [r[i] for r in rows])
        print(f"{name}: fixed {a0 * 1e3 / waves:.2f} us per wave, {s * 1e3 * 128 / waves:.3f} us per 128 keys per wave")


if __name__ == "__main__":
    main()
