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


def _capsules(**tensors):
    """One fresh capsule per named tensor, in argument order (None stays None)."""
    return [None if t is None else _capsule(t, name) for name, t in tensors.items()]


def _mask_args(softmax_scale, causal, window_left, window_right, softcap, alibi_slopes):
    """The extension's arguments after the tensors, up to the ALiBi slopes (every entry point takes them)."""
    return (softmax_scale, causal, window_left, window_right, softcap, *_capsules(alibi_slopes=alibi_slopes))


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


# The forwards' workspaces kept zero, one per (device, stream): zeroed once on that stream, then
# passed with workspace_zeroed=True, so a call launches its kernel alone (no 4-byte reset of the
# Hopper kernel's tile counter before it; the kernel leaves the counter zero). Calls on one stream
# run in order, so they may share one; a stream handle is reused only after the old stream's work
# has completed (cudaStreamDestroy releases it then). Never freed: a few bytes per stream.
_FWD_ZEROED_BYTES = 256  # >= fwd_workspace_size() (16 bytes, kFwdWorkspaceBytes); tests check it
_fwd_zeroed = {}


def _fwd_workspace(q):
    """(workspace, zeroed) for a forward on q's device and current stream.

    During CUDA graph capture a fresh workspace from the graph's pool, reset by the launcher (a graph
    may replay on any stream, beside eager calls); elsewhere the stream's zeroed one.
    """
    if not q.is_cuda or torch.cuda.is_current_stream_capturing():
        return _workspace(q.device), False
    key = (q.device.index, torch.cuda.current_stream(q.device).cuda_stream)
    ws = _fwd_zeroed.get(key)
    if ws is None:  # zeroed on the same stream, ahead of the call; setdefault: one per key across threads
        ws = _fwd_zeroed.setdefault(key, torch.zeros(_FWD_ZEROED_BYTES, dtype=torch.uint8, device=q.device))
    return to_dlpack(ws), True


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
        ws, zeroed = _fwd_workspace(q)
        ext().fwd(*_capsules(q=q, k=k, v=v, out=out, lse=lse),
                  *_mask_args(softmax_scale, causal, window_left, window_right, softcap, alibi_slopes),
                  _stream(q), backend, ws, 0.0, workspace_zeroed=zeroed)
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
        ws, zeroed = _fwd_workspace(q)
        ext().varlen_fwd(*_capsules(q=q, k=k, v=v, out=out, cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k),
                         max_seqlen_q, max_seqlen_k, *_capsules(lse=lse),
                         *_mask_args(softmax_scale, causal, window_left, window_right, softcap, alibi_slopes),
                         _stream(q), backend, ws, 0.0, workspace_zeroed=zeroed)
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
        ext().bwd(*_capsules(dout=dout, q=q, k=k, v=v, out=out, lse=lse, dq=dq, dk=dk, dv=dv),
                  *_mask_args(softmax_scale, causal, window_left, window_right, softcap, alibi_slopes),
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
        ext().varlen_bwd(*_capsules(dout=dout, q=q, k=k, v=v, out=out, lse=lse, dq=dq, dk=dk, dv=dv,
                                    cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k),
                         max_seqlen_q, max_seqlen_k,
                         *_mask_args(softmax_scale, causal, window_left, window_right, softcap, alibi_slopes),
                         deterministic, _stream(q), backend, _workspace(q.device), 0.0)
    return dq, dk, dv


@varlen_bwd.register_fake
def _varlen_bwd_fake(dout, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, softmax_scale,
                     causal, window_left, window_right, softcap, alibi_slopes, deterministic, backend):
    return _grad_like(q), _grad_like(k), _grad_like(v)


# ---- autograd: the forward ops save what the backward needs and call the backward ops ------------------
# Both forward ops take (q, k, v, <varlen: cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k>, softmax_scale,
# causal, window_left, window_right, softcap, alibi_slopes, deterministic, backend); both backward ops take
# (dout, q, k, v, out, lse, <the same varlen arguments>, softmax_scale, ..., backend).
def _setup_context(ctx, inputs, output):
    q, k, v, *seq, softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, deterministic, backend = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse, alibi_slopes, *seq[:2])  # seq[:2]: the cu_seqlens (varlen only)
    ctx.max_seqlens = tuple(seq[2:])
    ctx.options = (softmax_scale, causal, window_left, window_right, softcap)
    ctx.deterministic, ctx.backend = deterministic, backend
    ctx.n_inputs = len(inputs)
    ctx.mark_non_differentiable(lse)  # as in flash_attn: the LSE output carries no gradient


def _backward(ctx, dout, dlse):
    q, k, v, out, lse, alibi_slopes, *cu_seqlens = ctx.saved_tensors
    op = torch.ops.flashcute.varlen_bwd if cu_seqlens else torch.ops.flashcute.bwd
    dq, dk, dv = op(dout, q, k, v, out, lse, *cu_seqlens, *ctx.max_seqlens, *ctx.options, alibi_slopes,
                    ctx.deterministic, ctx.backend)
    return (dq, dk, dv) + (None,) * (ctx.n_inputs - 3)


fwd.register_autograd(_backward, setup_context=_setup_context)
varlen_fwd.register_autograd(_backward, setup_context=_setup_context)
