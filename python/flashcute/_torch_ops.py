"""torch.library custom ops over flashcute._C: flashcute::fwd, flashcute::varlen_fwd,
flashcute::bwd and flashcute::varlen_bwd.

Each op allocates its outputs (and the workspace) with torch's caching allocator on the input's
device, runs on torch's current stream for that device, and mutates nothing; each has a fake
(meta) implementation for torch.compile, and the forward ops carry their autograd formula
(`register_autograd`), which calls the backward op.

Tensors cross into the extension as DLPack capsules from torch.utils.dlpack.to_dlpack, not through
Tensor.__dlpack__: the capsule path does no stream handshake on any torch version (torch 2.8-2.9's
Tensor.__dlpack__() synchronizes with the legacy default stream, which breaks CUDA graph capture),
costs no event and no device check per tensor, and (after detach) accepts tensors that require grad.

Ownership (tests/python/test_package_cpu.py checks it): every call builds fresh capsules, one per
tensor, that live in the call's argument list until the call returns and are never passed again. On
import the extension takes the DLManagedTensor over (the capsule is renamed "used_dltensor" and its
destructor cleared, as the DLPack protocol says) and calls its deleter exactly once when the call
ends, by a normal return on the error path as well (the extension raises without C++ exceptions).
A capsule the extension never imports (the call failed on another argument first) is freed by torch's
own capsule destructor.
"""

import contextlib
from typing import Optional

import torch
from torch import Tensor
from torch.utils.dlpack import to_dlpack

from ._ext import ext


def _capsule(t, name):
    if t.requires_grad:
        t = t.detach()
    try:
        return to_dlpack(t)
    except (RuntimeError, BufferError, TypeError, ValueError) as exc:
        raise TypeError(f"{name}: cannot be passed through DLPack (dtype {t.dtype}, layout {t.layout}): {exc}") from exc


def _opt_capsule(t, name):
    return None if t is None else _capsule(t, name)


def _guard(t):
    """Makes t's GPU current for the call (a no-op when it already is, or for non-CUDA tensors)."""
    if t.is_cuda and t.device.index != torch.cuda.current_device():
        return torch.cuda.device(t.device)
    return contextlib.nullcontext()


def _stream(t):
    return torch.cuda.current_stream(t.device).cuda_stream if t.is_cuda else 0


def _workspace(device):
    """Workspace allocator handed to the extension: called only when a call needs scratch bytes."""

    def alloc(nbytes):
        return to_dlpack(torch.empty(nbytes, dtype=torch.uint8, device=device))

    return alloc


def _last_dim_contiguous(t):
    return t if t.dim() == 0 or t.stride(-1) == 1 else t.contiguous()


# Output shapes. A tensor of the wrong rank still gets *some* output so that the C++ validation,
# which checks q/k/v before out and lse, reports the real problem by name.
def _out_shape(q, v):
    if q.dim() == 0 or v.dim() == 0:
        return q.shape
    return (*q.shape[:-1], v.shape[-1])


def _dense_lse_shape(q):
    return (q.shape[0], q.shape[2], q.shape[1]) if q.dim() == 4 else (0,)


def _varlen_lse_shape(q):
    return (q.shape[1], q.shape[0]) if q.dim() == 3 else (0,)


def _grad_like(t):
    return torch.empty(t.shape, dtype=t.dtype, device=t.device)


# ---- forward --------------------------------------------------------------------------------------
@torch.library.custom_op("flashcute::fwd", mutates_args=())
def fwd(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    softmax_scale: Optional[float],
    causal: bool,
    window_left: int,
    window_right: int,
    softcap: float,
    alibi_slopes: Optional[Tensor],
    deterministic: bool,
    backend: str,
) -> tuple[Tensor, Tensor]:
    """Dense forward: (out, lse). `deterministic` only travels to the backward."""
    with _guard(q):
        out = q.new_empty(_out_shape(q, v))
        lse = q.new_empty(_dense_lse_shape(q), dtype=torch.float32)
        ext().fwd(_capsule(q, "q"), _capsule(k, "k"), _capsule(v, "v"), _capsule(out, "out"), _capsule(lse, "lse"),
                  softmax_scale, causal, window_left, window_right, softcap, _opt_capsule(alibi_slopes, "alibi_slopes"),
                  _stream(q), backend, _workspace(q.device), 0.0)
    return out, lse


@fwd.register_fake
def _fwd_fake(q, k, v, softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, deterministic,
              backend):
    return q.new_empty(_out_shape(q, v)), q.new_empty(_dense_lse_shape(q), dtype=torch.float32)


@torch.library.custom_op("flashcute::varlen_fwd", mutates_args=())
def varlen_fwd(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    cu_seqlens_q: Tensor,
    cu_seqlens_k: Tensor,
    max_seqlen_q: int,
    max_seqlen_k: int,
    softmax_scale: Optional[float],
    causal: bool,
    window_left: int,
    window_right: int,
    softcap: float,
    alibi_slopes: Optional[Tensor],
    deterministic: bool,
    backend: str,
) -> tuple[Tensor, Tensor]:
    """Varlen forward: (out (total_q, heads_q, d_v), lse (heads_q, total_q))."""
    with _guard(q):
        out = q.new_empty(_out_shape(q, v))
        lse = q.new_empty(_varlen_lse_shape(q), dtype=torch.float32)
        ext().varlen_fwd(_capsule(q, "q"), _capsule(k, "k"), _capsule(v, "v"), _capsule(out, "out"),
                         _capsule(cu_seqlens_q, "cu_seqlens_q"), _capsule(cu_seqlens_k, "cu_seqlens_k"), max_seqlen_q,
                         max_seqlen_k, _capsule(lse, "lse"), softmax_scale, causal, window_left, window_right, softcap,
                         _opt_capsule(alibi_slopes, "alibi_slopes"), _stream(q), backend, _workspace(q.device), 0.0)
    return out, lse


@varlen_fwd.register_fake
def _varlen_fwd_fake(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, softmax_scale, causal,
                     window_left, window_right, softcap, alibi_slopes, deterministic, backend):
    return q.new_empty(_out_shape(q, v)), q.new_empty(_varlen_lse_shape(q), dtype=torch.float32)


# ---- backward -------------------------------------------------------------------------------------
@torch.library.custom_op("flashcute::bwd", mutates_args=())
def bwd(
    dout: Tensor,
    q: Tensor,
    k: Tensor,
    v: Tensor,
    out: Tensor,
    lse: Tensor,
    softmax_scale: Optional[float],
    causal: bool,
    window_left: int,
    window_right: int,
    softcap: float,
    alibi_slopes: Optional[Tensor],
    deterministic: bool,
    backend: str,
) -> tuple[Tensor, Tensor, Tensor]:
    """Dense backward: (dq, dk, dv) from the forward's out and lse."""
    dout = _last_dim_contiguous(dout)
    with _guard(q):
        dq, dk, dv = _grad_like(q), _grad_like(k), _grad_like(v)
        ext().bwd(_capsule(dout, "dout"), _capsule(q, "q"), _capsule(k, "k"), _capsule(v, "v"), _capsule(out, "out"),
                  _capsule(lse, "lse"), _capsule(dq, "dq"), _capsule(dk, "dk"), _capsule(dv, "dv"), softmax_scale,
                  causal, window_left, window_right, softcap, _opt_capsule(alibi_slopes, "alibi_slopes"),
                  deterministic, _stream(q), backend, _workspace(q.device), 0.0)
    return dq, dk, dv


@bwd.register_fake
def _bwd_fake(dout, q, k, v, out, lse, softmax_scale, causal, window_left, window_right, softcap, alibi_slopes,
              deterministic, backend):
    return _grad_like(q), _grad_like(k), _grad_like(v)


@torch.library.custom_op("flashcute::varlen_bwd", mutates_args=())
def varlen_bwd(
    dout: Tensor,
    q: Tensor,
    k: Tensor,
    v: Tensor,
    out: Tensor,
    lse: Tensor,
    cu_seqlens_q: Tensor,
    cu_seqlens_k: Tensor,
    max_seqlen_q: int,
    max_seqlen_k: int,
    softmax_scale: Optional[float],
    causal: bool,
    window_left: int,
    window_right: int,
    softcap: float,
    alibi_slopes: Optional[Tensor],
    deterministic: bool,
    backend: str,
) -> tuple[Tensor, Tensor, Tensor]:
    """Varlen backward: (dq, dk, dv)."""
    dout = _last_dim_contiguous(dout)
    with _guard(q):
        dq, dk, dv = _grad_like(q), _grad_like(k), _grad_like(v)
        ext().varlen_bwd(_capsule(dout, "dout"), _capsule(q, "q"), _capsule(k, "k"), _capsule(v, "v"),
                         _capsule(out, "out"), _capsule(lse, "lse"), _capsule(dq, "dq"), _capsule(dk, "dk"),
                         _capsule(dv, "dv"), _capsule(cu_seqlens_q, "cu_seqlens_q"),
                         _capsule(cu_seqlens_k, "cu_seqlens_k"), max_seqlen_q, max_seqlen_k, softmax_scale, causal,
                         window_left, window_right, softcap, _opt_capsule(alibi_slopes, "alibi_slopes"), deterministic,
                         _stream(q), backend, _workspace(q.device), 0.0)
    return dq, dk, dv


@varlen_bwd.register_fake
def _varlen_bwd_fake(dout, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, softmax_scale,
                     causal, window_left, window_right, softcap, alibi_slopes, deterministic, backend):
    return _grad_like(q), _grad_like(k), _grad_like(v)


# ---- autograd: the forward ops save what the backward needs and call the backward ops ------------------
def _fwd_setup_context(ctx, inputs, output):
    q, k, v, softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, deterministic, backend = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse, alibi_slopes)
    ctx.options = (softmax_scale, causal, window_left, window_right, softcap)
    ctx.deterministic, ctx.backend = deterministic, backend
    ctx.mark_non_differentiable(lse)  # as in flash_attn: the LSE output carries no gradient


def _fwd_backward(ctx, dout, dlse):
    q, k, v, out, lse, alibi_slopes = ctx.saved_tensors
    dq, dk, dv = torch.ops.flashcute.bwd(dout, q, k, v, out, lse, *ctx.options, alibi_slopes, ctx.deterministic,
                                         ctx.backend)
    return dq, dk, dv, None, None, None, None, None, None, None, None


fwd.register_autograd(_fwd_backward, setup_context=_fwd_setup_context)


def _varlen_fwd_setup_context(ctx, inputs, output):
    (q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, softmax_scale, causal, window_left, window_right,
     softcap, alibi_slopes, deterministic, backend) = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, alibi_slopes)
    ctx.seqlens = (max_seqlen_q, max_seqlen_k)
    ctx.options = (softmax_scale, causal, window_left, window_right, softcap)
    ctx.deterministic, ctx.backend = deterministic, backend
    ctx.mark_non_differentiable(lse)


def _varlen_fwd_backward(ctx, dout, dlse):
    q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, alibi_slopes = ctx.saved_tensors
    dq, dk, dv = torch.ops.flashcute.varlen_bwd(dout, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, *ctx.seqlens,
                                                *ctx.options, alibi_slopes, ctx.deterministic, ctx.backend)
    return (dq, dk, dv) + (None,) * 12


varlen_fwd.register_autograd(_varlen_fwd_backward, setup_context=_varlen_fwd_setup_context)
