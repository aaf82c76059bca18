"""Framework-neutral calls on DLPack tensors: torch, CuPy, JAX, NumPy (CPU arrays are rejected by
validation, which is still useful to check arguments), or raw DLPack capsules.

The caller allocates every output (and the workspace) and names the CUDA stream; these
functions only describe the tensors to the C++ library and enqueue the kernels. Layouts are
flash_attn's (include/flashcute/args.h):

    dense   q (batch, seqlen_q, heads_q, d)   k/v (batch, seqlen_k, heads_kv, d | d_v)
            out (batch, seqlen_q, heads_q, d_v)  lse float32 (batch, heads_q, seqlen_q)
    varlen  q (total_q, heads_q, d)  k/v (total_k, heads_kv, d | d_v)  out (total_q, heads_q, d_v)
            lse float32 (heads_q, total_q)  cu_seqlens_q/k int32 (batch + 1) on the GPU

`stream` is None or 0 (the legacy default stream), an integer cudaStream_t, or a stream object:
torch (`.cuda_stream`), CuPy (`.ptr`) or any object with `__cuda_stream__()`.
`workspace` is None, a CUDA array of at least *_workspace_size() bytes, or a callable
`alloc(nbytes) -> array` that is called only when the call needs scratch memory, e.g.
`workspace=lambda n: cupy.empty(n, dtype=cupy.uint8)`. The backward needs one; the forward's is
optional (a few bytes: on Hopper its persistent kernel keeps a tile counter there and is faster with
it). One workspace must not serve two calls that may run at the same time. The forwards'
`workspace_zeroed=True` promises that the workspace's bytes are zero (zeroed once, then given to
forward calls only): the kernel leaves them zero again, so the call skips the counter's reset (a
4-byte memset launched before each kernel).

Errors: ValueError (bad shapes, strides, devices, options) and TypeError (dtypes) carry the C++
validation message verbatim; NotImplementedError (a RuntimeError) for valid input this build or
GPU cannot run; RuntimeError for CUDA failures.

Example (CuPy):
    out = cupy.empty_like(q)
    flashcute.ops.fwd(q, k, v, out, causal=True, stream=cupy.cuda.get_current_stream())
"""

from ._ext import ext

__all__ = [
    "stream_handle",
    "fwd",
    "varlen_fwd",
    "bwd",
    "varlen_bwd",
    "fwd_workspace_size",
    "varlen_fwd_workspace_size",
    "bwd_workspace_size",
    "varlen_bwd_workspace_size",
    "version",
    "build_config",
]


def stream_handle(stream):
    """The integer cudaStream_t of `stream` (None -> 0, the legacy default stream)."""
    if stream is None:
        return 0
    if isinstance(stream, int):
        return stream
    proto = getattr(stream, "__cuda_stream__", None)
    if proto is not None:  # CUDA Python's stream protocol: (version, handle)
        return int((proto() if callable(proto) else proto)[1])
    for attr in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        handle = getattr(stream, attr, None)
        if isinstance(handle, int):
            return handle
    raise TypeError(
        f"stream: expected None, an int cudaStream_t or a CUDA stream object, got {type(stream).__name__}"
    )


def _window(window_size):
    left, right = window_size
    return int(left), int(right)


def fwd(q, k, v, out, lse=None, *, softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
        alibi_slopes=None, stream=None, backend="auto", workspace=None, dropout_p=0.0, workspace_zeroed=False):
    """out (and lse when given) = attention(q, k, v). Returns None; errors raise (see module doc)."""
    left, right = _window(window_size)
    ext().fwd(q, k, v, out, lse, softmax_scale, causal, left, right, softcap, alibi_slopes,
              stream_handle(stream), backend, workspace, dropout_p, bool(workspace_zeroed))


def varlen_fwd(q, k, v, out, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, lse=None, *,
               softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
               stream=None, backend="auto", workspace=None, dropout_p=0.0, cu_seqlens_q_host=None,
               cu_seqlens_k_host=None, workspace_zeroed=False):
    """Varlen forward. Optional host copies of cu_seqlens (CPU int32) are validated as well."""
    left, right = _window(window_size)
    ext().varlen_fwd(q, k, v, out, cu_seqlens_q, cu_seqlens_k, int(max_seqlen_q), int(max_seqlen_k), lse,
                     softmax_scale, causal, left, right, softcap, alibi_slopes, stream_handle(stream), backend,
                     workspace, dropout_p, cu_seqlens_q_host, cu_seqlens_k_host, bool(workspace_zeroed))


def bwd(dout, q, k, v, out, lse, dq, dk, dv, *, softmax_scale=None, causal=False, window_size=(-1, -1),
        softcap=0.0, alibi_slopes=None, deterministic=False, stream=None, backend="auto", workspace=None,
        dropout_p=0.0):
    """dq, dk, dv from the forward's out and lse. Needs a workspace (see bwd_workspace_size)."""
    left, right = _window(window_size)
    ext().bwd(dout, q, k, v, out, lse, dq, dk, dv, softmax_scale, causal, left, right, softcap, alibi_slopes,
              deterministic, stream_handle(stream), backend, workspace, dropout_p)


def varlen_bwd(dout, q, k, v, out, lse, dq, dk, dv, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, *,
               softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
               deterministic=False, stream=None, backend="auto", workspace=None, dropout_p=0.0,
               cu_seqlens_q_host=None, cu_seqlens_k_host=None):
    """Varlen backward (layouts as varlen_fwd)."""
    left, right = _window(window_size)
    ext().varlen_bwd(dout, q, k, v, out, lse, dq, dk, dv, cu_seqlens_q, cu_seqlens_k, int(max_seqlen_q),
                     int(max_seqlen_k), softmax_scale, causal, left, right, softcap, alibi_slopes, deterministic,
                     stream_handle(stream), backend, workspace, dropout_p, cu_seqlens_q_host, cu_seqlens_k_host)


def fwd_workspace_size(q, k, v, out, lse=None, *, softmax_scale=None, causal=False, window_size=(-1, -1),
                       softcap=0.0, alibi_slopes=None, backend="auto", dropout_p=0.0):
    """Scratch bytes fwd() needs (validates the arguments; touches no GPU)."""
    left, right = _window(window_size)
    return ext().fwd_workspace_size(q, k, v, out, lse, softmax_scale, causal, left, right, softcap, alibi_slopes,
                                    backend, dropout_p)


def varlen_fwd_workspace_size(q, k, v, out, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, lse=None, *,
                              softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                              alibi_slopes=None, backend="auto", dropout_p=0.0):
    """Scratch bytes varlen_fwd() needs."""
    left, right = _window(window_size)
    return ext().varlen_fwd_workspace_size(q, k, v, out, cu_seqlens_q, cu_seqlens_k, int(max_seqlen_q),
                                           int(max_seqlen_k), lse, softmax_scale, causal, left, right, softcap,
                                           alibi_slopes, backend, dropout_p)


def bwd_workspace_size(dout, q, k, v, out, lse, dq, dk, dv, *, softmax_scale=None, causal=False,
                       window_size=(-1, -1), softcap=0.0, alibi_slopes=None, deterministic=False, backend="auto",
                       dropout_p=0.0):
    """Scratch bytes bwd() needs."""
    left, right = _window(window_size)
    return ext().bwd_workspace_size(dout, q, k, v, out, lse, dq, dk, dv, softmax_scale, causal, left, right,
                                    softcap, alibi_slopes, deterministic, backend, dropout_p)


def varlen_bwd_workspace_size(dout, q, k, v, out, lse, dq, dk, dv, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                              max_seqlen_k, *, softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                              alibi_slopes=None, deterministic=False, backend="auto", dropout_p=0.0):
    """Scratch bytes varlen_bwd() needs."""
    left, right = _window(window_size)
    return ext().varlen_bwd_workspace_size(dout, q, k, v, out, lse, dq, dk, dv, cu_seqlens_q, cu_seqlens_k,
                                           int(max_seqlen_q), int(max_seqlen_k), softmax_scale, causal, left, right,
                                           softcap, alibi_slopes, deterministic, backend, dropout_p)


def version():
    """The C++ library's version, e.g. '0.1.0'."""
    return ext().version()


def build_config():
    """What this build contains (architectures, dtypes, head-dim buckets, kernel count)."""
    return ext().build_config()
