"""The float64 oracle and the tolerance rule of docs/TESTING.md for the Python GPU tests (imported by
test_fwd_gpu.py, test_bwd_gpu.py and test_transformers_gpu.py; not a test module itself).

golden = float64 math on the already-rounded inputs; lp ("low-precision twin") = the same math the way
an unfused implementation in the input dtype does it (fp32 scores and softmax, P rounded to the dtype
before the PV product, out rounded to the dtype; through autograd its gradients are fp32 products of
dtype-rounded factors, rounded to the dtype). Both are differentiable, so gradients come from
torch.autograd on the same formulas:
  max|kernel - golden|  <= R * max|lp - golden| + 2 ulp(max|golden|)        R = 2 fwd, 3 bwd
  mean|kernel - golden| <= max(1.5 * mean|lp - golden|, 0.25 * mean ulp(golden))
  lse: |lse - golden| <= 1e-5 * (1 + |golden|), -inf exactly where golden is -inf.
"""

import contextlib

import pytest
import torch

BF16, FP16 = torch.bfloat16, torch.float16
R_FWD, R_BWD = 2, 3


def gpu_marks(what="the package's GPU tests"):
    """The marks of a test module (pytestmark) or a test that needs a CUDA device and the extension:
    skipped with the reason where either is missing, never passed silently."""
    import flashcute

    return [
        pytest.mark.gpu,
        pytest.mark.skipif(not torch.cuda.is_available(), reason=f"no CUDA device: {what} are skipped"),
        pytest.mark.skipif(not flashcute.extension_available(),
                           reason="flashcute._C is not built/importable: configure with -DFLASHCUTE_BUILD_PYTHON=ON"),
    ]



def reference(q, k, v, *, softmax_scale=None, causal=False, window=(-1, -1), softcap=0.0, alibi=None, lowp=False,
              dtype=None):
    """(out (b, sq, hq, dv), lse (b, hq, sq)) of dense inputs. golden: float64. lowp: fp32 scores and
    softmax, P rounded to `dtype` before the PV product, out rounded to `dtype`. Differentiable."""
    dtype = dtype or q.dtype
    ct = torch.float32 if lowp else torch.float64
    b, sq, hq, d = q.shape
    sk, hk = k.shape[1], k.shape[2]
    scale = softmax_scale if softmax_scale is not None else d ** -0.5
    g = hq // hk
    qc = q.to(ct).transpose(1, 2)  # (b, hq, sq, d)
    kc = k.to(ct).repeat_interleave(g, dim=2).transpose(1, 2)  # (b, hq, sk, d)
    vc = v.to(ct).repeat_interleave(g, dim=2).transpose(1, 2)  # (b, hq, sk, dv)
    s = qc @ kc.transpose(-1, -2)  # (b, hq, sq, sk)
    s = softcap * torch.tanh(s * scale / softcap) if softcap > 0 else s * scale
    i = torch.arange(sq, device=q.device)[:, None]
    j = torch.arange(sk, device=q.device)[None, :]
    diag = i + (sk - sq)  # bottom-right alignment
    if alibi is not None:
        slopes = alibi.to(ct).reshape(-1 if alibi.dim() == 2 else 1, hq)[:, :, None, None]
        s = s - slopes * (diag - j).abs().to(ct)
    left, right = window
    if causal:
        right = 0
    visible = torch.ones(sq, sk, dtype=torch.bool, device=q.device)
    if left >= 0:
        visible &= j >= diag - left
    if right >= 0:
        visible &= j <= diag + right
    s = s.masked_fill(~visible, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - lse[..., None])
    p = torch.where(torch.isneginf(lse)[..., None], torch.zeros_like(p), p)  # rows that see no key
    if lowp:
        p = p.to(dtype).to(ct)
    out = (p @ vc).transpose(1, 2)
    return (out.to(dtype) if lowp else out), lse


def ulp(dtype, x):
    mant, tiny, sub = (10, 2.0 ** -14, 2.0 ** -24) if dtype == FP16 else (7, 2.0 ** -126, 2.0 ** -133)
    ax = x.abs().double()
    e = torch.floor(torch.log2(ax.clamp_min(tiny)))
    return torch.where(ax >= tiny, torch.exp2(e - mant), torch.full_like(ax, sub))


def check_tolerance(name, kernel, golden, lp, dtype, r, repro):
    k, g, l = kernel.double(), golden.double(), lp.double()
    assert k.shape == g.shape, f"{name}: shape {tuple(k.shape)} != {tuple(g.shape)}; {repro}"
    fin = torch.isfinite(g)
    bad = fin & ~torch.isfinite(k)
    assert not bad.any(), f"{name}: {int(bad.sum())} non-finite values where golden is finite; {repro}"
    if not fin.any():
        return
    err = (k - g).abs()[fin]
    lerr = (l - g).abs()[fin & torch.isfinite(l)]
    a = 2 * ulp(dtype, g[fin].abs().max()).item()
    max_bound = r * lerr.max().item() + a
    assert err.max().item() <= max_bound, f"{name}: max err {err.max().item():.3e} > {max_bound:.3e}; {repro}"
    mean_bound = max(1.5 * lerr.mean().item(), 0.25 * ulp(dtype, g[fin]).mean().item())
    assert err.mean().item() <= mean_bound, f"{name}: mean err {err.mean().item():.3e} > {mean_bound:.3e}; {repro}"


def check_lse(lse, golden, repro):
    lse, golden = lse.double(), golden.double()
    assert torch.equal(torch.isneginf(lse), torch.isneginf(golden)), f"lse: -inf rows differ; {repro}"
    fin = torch.isfinite(golden)
    err = (lse - golden).abs()[fin]
    bound = 1e-5 * (1 + golden.abs()[fin])
    assert (err <= bound).all(), f"lse: max err {err.max().item():.3e}; {repro}"


def run_or_skip(fn, *args, **kwargs):
    """Calls fn; skips the test when this build lacks the dtype / head-dim bucket / pass."""
    try:
        return fn(*args, **kwargs)
    except NotImplementedError as exc:
        if "not compiled into this build" in str(exc) or "no attention" in str(exc):
            pytest.skip(f"not in this build: {exc}")
        raise


def randn(*shape, dtype=BF16, device="cuda", scale=1.0):
    return (torch.randn(*shape, device=device, dtype=torch.float32) * scale).to(dtype)


def make_alibi(kind, b, hq):
    if kind == "heads":
        return torch.rand(hq, device="cuda", dtype=torch.float32) * 0.3
    return torch.rand(b, hq, device="cuda", dtype=torch.float32) * 0.3




def varlen_reference(q, k, v, lens_q, lens_k, *, alibi=None, **options):
    """(out (total_q, hq, dv), lse (hq, total_q)) of varlen inputs: the dense reference per sequence
    (zero-length sequences included), concatenated. Differentiable."""
    outs, lses, oq, ok = [], [], 0, 0
    for i, (lq, lk) in enumerate(zip(lens_q, lens_k)):
        seq_alibi = alibi[i] if alibi is not None and alibi.dim() == 2 else alibi
        o, lse = reference(q[oq:oq + lq][None], k[ok:ok + lk][None], v[ok:ok + lk][None], alibi=seq_alibi, **options)
        outs.append(o[0])
        lses.append(lse[0])
        oq, ok = oq + lq, ok + lk
    return torch.cat(outs), torch.cat(lses, dim=-1)


def oracle_grads(ref_out, inputs, dout):
    """(golden grads, lp grads) of sum(ref_out(*inputs) * dout) w.r.t. each input. ref_out(*tensors,
    lowp=bool) returns the output only; inputs are the kernel's (rounded) fp16/bf16 tensors."""
    g64 = [t.detach().double().requires_grad_() for t in inputs]
    ref_out(*g64, lowp=False).backward(dout.double())
    glp = [t.detach().clone().requires_grad_() for t in inputs]
    ref_out(*glp, lowp=True).backward(dout)
    return [t.grad for t in g64], [t.grad for t in glp]


def check_grads(names, kernel_grads, golden_grads, lp_grads, dtype, repro):
    """The backward tolerance rule (R = 3) for each named gradient."""
    for name, kern, gold, lp in zip(names, kernel_grads, golden_grads, lp_grads):
        assert kern is not None, f"{name}: no gradient; {repro}"
        assert kern.dtype == dtype and kern.shape == gold.shape, \
            f"{name}: {kern.dtype} {tuple(kern.shape)}, expected {dtype} {tuple(gold.shape)}; {repro}"
        check_tolerance(name, kern, gold, lp, dtype, R_BWD, repro)


def cu_seqlens(lens, device="cuda"):
    out = [0]
    for n in lens:
        out.append(out[-1] + n)
    return torch.tensor(out, dtype=torch.int32, device=device)


@contextlib.contextmanager
def default_dtype(dtype):
    """torch's default dtype inside the block (models built under it keep their float32 buffers)."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


def padding_mask(batch, seqlen, pads, side, device="cuda"):
    """A (batch, seqlen) int64 attention mask with pads[i] padding tokens on the given side of row i."""
    mask = torch.ones(batch, seqlen, dtype=torch.long, device=device)
    for i, p in enumerate(pads):
        if p and side == "left":
            mask[i, :p] = 0
        elif p:
            mask[i, seqlen - p:] = 0
    return mask


def padded_labels(input_ids, mask):
    """Next-token labels for a padded batch: -100 (ignored) where the token or the position predicting it
    (the one before) is padding, so that no loss term reads a padded position's output."""
    keep = mask.bool().clone()
    keep[:, 1:] &= mask[:, :-1].bool()
    return input_ids.masked_fill(~keep, -100)
