#!/usr/bin/env python3
"""A few launches of SDPA's cuDNN forward on one grid row (batch 16384/seqlen, heads 2048/d), for ncu.

    ncu --kernel-name regex:... python3 cudnn_run.py --d 64 --seqlen 512 --causal --dtype bf16
"""
import argparse

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

ap = argparse.ArgumentParser()
ap.add_argument("--d", type=int, default=64)
ap.add_argument("--seqlen", type=int, default=512)
ap.add_argument("--causal", action="store_true")
ap.add_argument("--dtype", default="bf16")
ap.add_argument("--iters", type=int, default=3)
ap.add_argument("--names", action="store_true", help="print the CUDA kernels one launch runs (torch.profiler)")
a = ap.parse_args()
dt = torch.bfloat16 if a.dtype == "bf16" else torch.float16
b, h = 16384 // a.seqlen, 2048 // a.d
q, k, v = (torch.randn(b, h, a.seqlen, a.d, device="cuda", dtype=dt) for _ in range(3))
with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
    for _ in range(a.iters):
        torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=a.causal)
torch.cuda.synchronize()
if a.names:
    from torch.profiler import ProfilerActivity, profile

    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]), profile(activities=[ProfilerActivity.CUDA]) as prof:
        torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=a.causal)
        torch.cuda.synchronize()
    for e in prof.key_averages():
        if e.device_type.name == "CUDA" or getattr(e, "self_device_time_total", 0):
            print("kernel:", e.key)
