#!/usr/bin/env python3
"""One forward or backward of flashcute and of PyTorch SDPA's FlashAttention-2 on the same inputs, inside
a cudaProfilerStart/Stop window, for ncu side by side (the warm-up calls stay outside the window):

    ncu --profile-from-start off --set detailed -o pair \\
        python3 bench/profile_pair.py --pass bwd --d 128 --seqlen 8192 [--causal] [--backend sm80]

batch = 16384/seqlen and heads = 2048/d as in BENCHMARKING.md's grid; bf16.
"""

import argparse

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import flashcute


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pass", dest="which", choices=("fwd", "bwd"), default="bwd")
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--seqlen", type=int, default=8192)
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--backend", default=None, help="flashcute forward path (sm80, sm90); default: dispatch's choice")
    a = ap.parse_args()
    batch, heads = 16384 // a.seqlen, 2048 // a.d
    shape = (batch, a.seqlen, heads, a.d)
    torch.manual_seed(0)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    dout = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
    qt, kt, vt = (x.detach().transpose(1, 2).requires_grad_() for x in (q, k, v))
    dt = dout.transpose(1, 2)

    def ours():
        with flashcute.use_backend(a.backend or "auto"):
            out = flashcute.flash_attn_func(q, k, v, causal=a.causal)
        if a.which == "bwd":
            torch.autograd.grad(out, (q, k, v), dout)

    def fa2():
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            out = F.scaled_dot_product_attention(qt, kt, vt, is_causal=a.causal)
            if a.which == "bwd":
                torch.autograd.grad(out, (qt, kt, vt), dt)

    for _ in range(3):
        ours()
        fa2()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    ours()
    fa2()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    print(f"profile_pair: {a.which} bf16 d {a.d} seqlen {a.seqlen} causal {a.causal}, batch {batch} x {heads} heads")


if __name__ == "__main__":
    main()
