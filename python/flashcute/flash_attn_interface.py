"""flash_attn's functions (names, argument order, defaults, return conventions of flash_attn 2.x's
flash_attn_interface), running flashcute's kernels through the torch custom ops of _torch_ops.

    q: (batch, seqlen_q, nheads, headdim)   k, v: (batch, seqlen_k, nheads_k, headdim)
    varlen: q (total_q, nheads, headdim), k/v (total_k, nheads_k, headdim), cu_seqlens int32 (batch+1)

Differences from flash_attn, all raised as errors rather than silently changed:
  - dropout_p > 0 raises NotImplementedError (dropout is not built yet); block_table (paged KV) too.
  - headdim must be a multiple of 8 (flash_attn pads other sizes): ValueError with the rule.
  - causal=True with window_size[1] > 0 raises ValueError (flash_attn silently uses 0).
  - return_attn_probs=True returns (out, softmax_lse, None): the attention-probability tensor is
    only meaningful with dropout in flash_attn, and dropout_p must be 0 here.
Exceptions: ValueError/TypeError for bad input with the C++ validation message, NotImplementedError
(a RuntimeError) for valid input this build or GPU cannot run, RuntimeError for CUDA failures.
"""


import contextlib

import torch

from . import _TORCH_API
from . import _torch_ops  # noqa: F401  (registers torch.ops.flashcute.*)

__all__ = list(_TORCH_API)  # the one list lives in flashcute/__init__.py, which must not import torch

_BACKENDS = ("auto", "sm80", "sm90")
_backend = "auto"


@contextlib.contextmanager
def use_backend(name):
    """Pins the compiled path ("auto", "sm80", "sm90") for the flash_attn_* calls inside the block."""
    global _backend
    if name not in _BACKENDS:
        raise ValueError(f"backend='{name}' is not a known backend (auto, sm80, sm90)")
    previous, _backend = _backend, name
    try:
        yield
    finally:
        _backend = previous


def _check_supported(dropout_p, block_table=None):
    if dropout_p != 0.0:
        raise NotImplementedError(
            f"dropout_p={dropout_p}: attention dropout is not implemented in flashcute yet; "
            "only dropout_p=0.0 is supported (e.g. evaluate with model.eval() or attention_dropout=0)"
        )
    if block_table is not None:
        raise NotImplementedError("block_table: paged KV caches are not implemented in flashcute yet")


def _maybe_contiguous(x):
    # As flash_attn: the kernels need a contiguous last dimension; other strides are used as given.
    return x.contiguous() if x is not None and x.dim() > 0 and x.stride(-1) != 1 else x


def _attention(op, q, k, v, seq_args, dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes,
               deterministic, return_attn_probs, block_table=None):
    """The body of every flash_attn_* function: checks, layouts, the custom op, flash_attn's return value.
    seq_args: () dense; (cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k) varlen."""
    _check_supported(dropout_p, block_table)
    q, k, v = (_maybe_contiguous(x) for x in (q, k, v))
    left, right = window_size
    out, lse = op(q, k, v, *seq_args, softmax_scale, bool(causal), int(left), int(right), float(softcap), alibi_slopes,
                  bool(deterministic), _backend)
    return (out, lse, None) if return_attn_probs else out


# The signatures below are flash_attn 2.x's, argument for argument (positional calls must keep working).
def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                    alibi_slopes=None, deterministic=False, return_attn_probs=False):
    """out (batch, seqlen_q, nheads, headdim_v) = softmax(q k^T * softmax_scale [masked]) v.

    softmax_scale: default 1/sqrt(headdim); must be > 0. causal and window_size=(left, right) are
    aligned to the bottom-right corner of the attention matrix; -1 = unbounded. softcap > 0: c*tanh(s/c).
    alibi_slopes: fp32 (nheads,) or (batch, nheads). MQA/GQA: nheads % nheads_k == 0.
    return_attn_probs: also return softmax_lse (batch, nheads, seqlen_q) and None.
    """
    return _attention(torch.ops.flashcute.fwd, q, k, v, (), dropout_p, softmax_scale, causal, window_size, softcap,
                      alibi_slopes, deterministic, return_attn_probs)


def flash_attn_qkvpacked_func(qkv, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                              alibi_slopes=None, deterministic=False, return_attn_probs=False):
    """qkv: (batch, seqlen, 3, nheads, headdim). Returns out (batch, seqlen, nheads, headdim)."""
    q, k, v = _maybe_contiguous(qkv).unbind(dim=2)
    return flash_attn_func(q, k, v, dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes,
                           deterministic, return_attn_probs)


def flash_attn_kvpacked_func(q, kv, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1),
                             softcap=0.0, alibi_slopes=None, deterministic=False, return_attn_probs=False):
    """q: (batch, seqlen_q, nheads, headdim), kv: (batch, seqlen_k, 2, nheads_k, headdim)."""
    k, v = _maybe_contiguous(kv).unbind(dim=2)
    return flash_attn_func(q, k, v, dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes,
                           deterministic, return_attn_probs)


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p=0.0,
                           softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                           deterministic=False, return_attn_probs=False, block_table=None):
    """q: (total_q, nheads, headdim), k/v: (total_k, nheads_k, headdim), cu_seqlens_q/k: int32
    (batch + 1) on the GPU, max_seqlen_q/k: ints >= every sequence's length.
    Returns out (total_q, nheads, headdim_v) [, softmax_lse (nheads, total_q), None]."""
    seq_args = (cu_seqlens_q, cu_seqlens_k, int(max_seqlen_q), int(max_seqlen_k))
    return _attention(torch.ops.flashcute.varlen_fwd, q, k, v, seq_args, dropout_p, softmax_scale, causal, window_size,
                      softcap, alibi_slopes, deterministic, return_attn_probs, block_table)


def flash_attn_varlen_qkvpacked_func(qkv, cu_seqlens, max_seqlen, dropout_p=0.0, softmax_scale=None, causal=False,
                                     window_size=(-1, -1), softcap=0.0, alibi_slopes=None, deterministic=False,
                                     return_attn_probs=False):
    """qkv: (total, 3, nheads, headdim); the same cu_seqlens/max_seqlen serve queries and keys."""
    q, k, v = _maybe_contiguous(qkv).unbind(dim=1)
    return flash_attn_varlen_func(q, k, v, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen, dropout_p, softmax_scale,
                                  causal, window_size, softcap, alibi_slopes, deterministic, return_attn_probs)


def flash_attn_varlen_kvpacked_func(q, kv, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p=0.0,
                                    softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                                    alibi_slopes=None, deterministic=False, return_attn_probs=False):
    """q: (total_q, nheads, headdim), kv: (total_k, 2, nheads_k, headdim)."""
    k, v = _maybe_contiguous(kv).unbind(dim=1)
    return flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p,
                                  softmax_scale, causal, window_size, softcap, alibi_slopes, deterministic,
                                  return_attn_probs)
