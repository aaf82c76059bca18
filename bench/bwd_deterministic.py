#!/usr/bin/env python3
"""Backward only, flashcute's default vs deterministic mode, beside PyTorch SDPA's FlashAttention-2 and
cuDNN backends, same inputs, same process (BENCHMARKING.md grid rows: bf16, d 64 and 128, seqlen 2k and
8k, causal and not; batch = 16384/seqlen, heads = 2048/d).

Each implementation's backward is timed as torch.autograd.grad on a retained forward graph with bench.py's
timer and its default settings (CUDA events, warm-up, L2 flushed before each call, median); FLOPs = 2.5 x
the forward's (halved for causal). bench.py times the default mode across the whole grid; this script adds
the deterministic column and its ratio.

    PYTHONPATH=build/gpu/python python3 bench/bwd_deterministic.py
"""

import json
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import flashcute

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (bench.py beside this file: its Timer and default timing settings)


def main():
    timer = bench.Timer(torch, bench.parse_args([]))
    median_ms = lambda fn: timer.median_ms(fn)[0]  # noqa: E731
    rows = []
    for d in (64, 128):
        for seqlen in (2048, 8192):
            for causal in (False, True):
                batch, heads = 16384 // seqlen, 2048 // d
                shape = (batch, seqlen, heads, d)
                q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
                dout = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
                flops = 2.5 * 4 * batch * heads * seqlen * seqlen * d * (0.5 if causal else 1.0)
                row = {"d": d, "seqlen": seqlen, "causal": causal}
                for deterministic in (False, True):
                    out = flashcute.flash_attn_func(q, k, v, causal=causal, deterministic=deterministic)
                    ms = median_ms(lambda: torch.autograd.grad(out, (q, k, v), dout, retain_graph=True))
                    row["ours_det" if deterministic else "ours"] = flops / ms / 1e9
                qt, kt, vt = (x.detach().transpose(1, 2).requires_grad_() for x in (q, k, v))
                dt = dout.transpose(1, 2)
                for name, backend in (("fa2", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
                    try:
                        with sdpa_kernel(backend):
                            out = F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)
                            ms = median_ms(lambda: torch.autograd.grad(out, (qt, kt, vt), dt, retain_graph=True))
                        row[name] = flops / ms / 1e9
                    except RuntimeError as e:  # backend unavailable for this shape/GPU
                        row[name] = None
                        row[name + "_error"] = str(e).splitlines()[0]
                rows.append(row)
                print(json.dumps(row), flush=True)
    fmt = lambda x: f"{x:.0f}" if x else "-"
    print("| d | seqlen | causal | ours | ours deterministic | FA2 | cuDNN | ours / FA2 | deterministic / default |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = f"{r['ours'] / r['fa2']:.2f}" if r["fa2"] else "-"
        print(f"| {r['d']} | {r['seqlen']} | {'yes' if r['causal'] else 'no'} | {fmt(r['ours'])} | {fmt(r['ours_det'])} | "
              f"{fmt(r['fa2'])} | {fmt(r['cudnn'])} | {ratio} | {r['ours_det'] / r['ours']:.2f} |")


if __name__ == "__main__":
    main()
