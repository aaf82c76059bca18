"""The float64 oracle and the tolerance rule of docs/TESTING.md for the Python GPU tests (imported by
test_fwd_gpu.py, test_bwd_gpu.py and test_transformers_gpu.py; not a test module itself).

golden = float64 math on the already-rounded inputs (gradients: torch.autograd through the float64
forward, i.e. the exact function's derivative). lp ("low-precision twin") = the same math the way an
unfused implementation in the input dtype does it:
  forward (reference(lowp=True)): fp32 scores and softmax, P rounded to the dtype before the PV
    product, out rounded to the dtype;
  backward (lowp_backward): the definition of the C++ oracle, reference/attention.cpp backward_lowp,
    computed explicitly in fp32 (no autograd): FlashAttention's formula with D_i = rowsum(dO_i * O_i)
    from the dtype-rounded out O the kernel's backward was given, P = exp(logit - lse) from the
    forward's lse rounded to fp32, dP = dO V^T, dS = P (dP - D) (times the softcap derivative),
    dQ = scale dS K, dK = scale dS^T Q, dV = P^T dO, with dS and P rounded to the dtype before their
    products and dQ, dK, dV rounded to the dtype. Why not autograd through the fp32 forward (the
    previous lp): it differentiates the softmax with D' = sum_j P_ij dP_ij, which O's rounding never
    enters, while a kernel that takes D from the dtype-rounded out (FlashAttention's formula, which
    the C++ oracle follows) carries that rounding into every dS of the row; with peaky softmax
    (inputs x3, x5) the autograd lp's dq/dk errors came out several times smaller than this
    formula's (CPU draws of the test shapes), a bound such a kernel cannot meet. Golden is
    unchanged by this choice.
Rule:
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



def _logits(qc, kc, scale, softcap, alibi, window, causal):
    """(logits (b, hq, sq, sk), tanh(s * scale / softcap) or None, visible (sq, sk)) in qc's dtype, for
    q (b, hq, sq, d) and k (b, hq, sk, d) already repeated over the GQA group: the logit of raw score
    s = q . k is s * scale (or softcap * tanh(s * scale / softcap)) minus slope * |i + sk - sq - j|;
    masks are bottom-right aligned (src/common/mask.h)."""
    ct = qc.dtype
    b, hq, sq, _ = qc.shape
    sk = kc.shape[2]
    s = qc @ kc.transpose(-1, -2)  # (b, hq, sq, sk)
    t = None
    if softcap > 0:
        t = torch.tanh(s * scale / softcap)
        s = softcap * t
    else:
        s = s * scale
    i = torch.arange(sq, device=qc.device)[:, None]
    j = torch.arange(sk, device=qc.device)[None, :]
    diag = i + (sk - sq)  # bottom-right alignment
    if alibi is not None:
        slopes = alibi.to(ct).reshape(-1 if alibi.dim() == 2 else 1, hq)[:, :, None, None]
        s = s - slopes * (diag - j).abs().to(ct)
    left, right = window
    if causal:
        right = 0
    visible = torch.ones(sq, sk, dtype=torch.bool, device=qc.device)
    if left >= 0:
        visible &= j >= diag - left
    if right >= 0:
        visible &= j <= diag + right
    return s, t, visible


def reference(q, k, v, *, softmax_scale=None, causal=False, window=(-1, -1), softcap=0.0, alibi=None, lowp=False,
              dtype=None):
    """(out (b, sq, hq, dv), lse (b, hq, sq)) of dense inputs. golden: float64. lowp: fp32 scores and
    softmax, P rounded to `dtype` before the PV product, out rounded to `dtype`. Differentiable."""
    dtype = dtype or q.dtype
    ct = torch.float32 if lowp else torch.float64
    d = q.shape[3]
    hq, hk = q.shape[2], k.shape[2]
    scale = softmax_scale if softmax_scale is not None else d ** -0.5
    g = hq // hk
    qc = q.to(ct).transpose(1, 2)  # (b, hq, sq, d)
    kc = k.to(ct).repeat_interleave(g, dim=2).transpose(1, 2)  # (b, hq, sk, d)
    vc = v.to(ct).repeat_interleave(g, dim=2).transpose(1, 2)  # (b, hq, sk, dv)
    s, _, visible = _logits(qc, kc, scale, softcap, alibi, window, causal)
    s = s.masked_fill(~visible, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - lse[..., None])
    p = torch.where(torch.isneginf(lse)[..., None], torch.zeros_like(p), p)  # rows that see no key
    if lowp:
        p = p.to(dtype).to(ct)
    out = (p @ vc).transpose(1, 2)
    return (out.to(dtype) if lowp else out), lse


def lowp_backward(q, k, v, out, dout, lse, *, softmax_scale=None, causal=False, window=(-1, -1), softcap=0.0,
                  alibi=None, dtype=None, round_to_dtype=True):
    """lp gradients (dq, dk, dv) of dense inputs (b, s, h, d), as reference/attention.cpp backward_lowp
    computes them (see the module docstring): fp32 throughout, inputs q, k, v, dout and the given out
    (the dtype-rounded forward output the kernel's backward saw) rounded to `dtype`, lse (b, hq, sq)
    rounded to fp32; D = rowsum(dout * out) in fp32; P = exp(logit - lse), 0 where masked or where the
    row's lse is -inf; dS = P (dP - D) (times 1 - tanh^2 with softcap) rounded to `dtype` before
    dQ = scale dS K and dK = scale dS^T Q; P rounded to `dtype` before dV = P^T dout; dk, dv summed
    over the q heads of each GQA group in fp32, then scaled and rounded; results in `dtype`.
    round_to_dtype=False with float64 tensors does the same formula in float64 with no rounding at
    all (a self-check: with the exact out and lse it is the exact gradient)."""
    dtype = dtype or q.dtype
    ct = torch.float32 if round_to_dtype else torch.float64

    def rnd(x):
        return x.to(dtype).to(ct) if round_to_dtype else x

    b, sq, hq, d = q.shape
    sk, hk = k.shape[1], k.shape[2]
    g = hq // hk
    scale = torch.tensor(softmax_scale if softmax_scale is not None else d ** -0.5, dtype=ct).item()  # C++: (float)
    qc = rnd(q.to(ct)).transpose(1, 2)  # (b, hq, sq, d)
    kc = rnd(k.to(ct)).repeat_interleave(g, dim=2).transpose(1, 2)  # (b, hq, sk, d)
    vc = rnd(v.to(ct)).repeat_interleave(g, dim=2).transpose(1, 2)  # (b, hq, sk, dv)
    oc = rnd(out.to(ct)).transpose(1, 2)  # (b, hq, sq, dv)
    gc = rnd(dout.to(ct)).transpose(1, 2)
    lse_c = lse.to(ct)  # fp32-rounded lse (the C++ casts the given lse to float)
    s, t, visible = _logits(qc, kc, scale, softcap, alibi, window, causal)
    live = visible & ~torch.isneginf(lse_c)[..., None]  # (b, hq, sq, sk): entries that take part
    zero = torch.zeros((), dtype=ct, device=q.device)
    p = torch.where(live, torch.exp(s - lse_c[..., None]), zero)
    dp = gc @ vc.transpose(-1, -2)  # (b, hq, sq, sk)
    dd = (gc * oc).sum(-1, keepdim=True)  # D = rowsum(dO * O), O the given (rounded) out
    ds = p * (dp - dd)
    if t is not None:
        ds = ds * (1 - t * t)
    ds = torch.where(live, rnd(ds), zero)
    dq = scale * (ds @ kc)  # (b, hq, sq, d)
    dk = (ds.transpose(-1, -2) @ qc).reshape(b, hk, g, sk, d).sum(2)  # (b, hk, sk, d)
    dv = (rnd(p).transpose(-1, -2) @ gc).reshape(b, hk, g, sk, v.shape[3]).sum(2)
    dk = scale * dk
    outs = (dq.transpose(1, 2), dk.transpose(1, 2), dv.transpose(1, 2))
    return tuple(x.to(dtype).contiguous() if round_to_dtype else x.contiguous() for x in outs)


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


def oracle_grads(inputs, dout, *, out=None, lens=None, repro="", **options):
    """(golden grads, lp grads) of inputs (q, k, v) for the upstream gradient dout. inputs are the
    kernel's (rounded) fp16/bf16 tensors; options are reference()'s (softmax_scale, causal, window,
    softcap, alibi). lens = (lens_q, lens_k): varlen inputs (total, heads, dim), one dense problem per
    sequence (an alibi of shape (batch, heads) is split per sequence).
    golden: torch.autograd through the float64 reference (the exact function's gradient).
    lp: lowp_backward (the C++ oracle's backward_lowp), given `out` = the dtype-rounded forward output
    the kernel's backward saw (default: the float64 out rounded to the dtype, what the C++ harness
    gives by default) and the float64 lse rounded to fp32. A given out must itself pass the forward
    rule (R = 2), so that a wrong forward cannot widen the backward's bound."""
    q, k, v = inputs
    dtype = q.dtype
    g64 = [t.detach().double().requires_grad_() for t in inputs]
    if lens is None:
        out64, lse64 = reference(*g64, **options)
    else:
        out64, lse64 = varlen_reference(*g64, *lens, **options)
    out64.backward(dout.double())
    golden = [t.grad for t in g64]
    out64, lse64 = out64.detach(), lse64.detach()
    if out is None:
        out = out64.to(dtype)
    else:
        if lens is None:
            out_lp, _ = reference(q, k, v, lowp=True, **options)
        else:
            out_lp, _ = varlen_reference(q, k, v, *lens, lowp=True, **options)
        check_tolerance("out (the forward output the backward was given)", out.detach(), out64, out_lp, dtype, R_FWD,
                        repro)
    out = out.detach()
    if lens is None:
        lp = lowp_backward(q, k, v, out, dout, lse64.float(), **options)
        return golden, list(lp)
    alibi = options.pop("alibi", None)
    parts, oq, ok = [], 0, 0
    for i, (lq, lk) in enumerate(zip(*lens)):
        seq_alibi = alibi[i] if alibi is not None and alibi.dim() == 2 else alibi
        rq, rk = slice(oq, oq + lq), slice(ok, ok + lk)
        parts.append(lowp_backward(q[rq][None], k[rk][None], v[rk][None], out[rq][None], dout[rq][None],
                                   lse64[:, rq][None].float(), alibi=seq_alibi, **options))
        oq, ok = oq + lq, ok + lk
    return golden, [torch.cat([p[n][0] for p in parts]) for n in range(3)]


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
