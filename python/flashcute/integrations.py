"""Integrations of flashcute's attention into other libraries. Nothing here is imported by
`import flashcute`, and nothing here imports the other library until a register_* function runs.

Hugging Face transformers (>= 4.48):

    import flashcute.integrations
    flashcute.integrations.register_transformers()          # idempotent
    model = LlamaForCausalLM(config, attn_implementation="flashcute")   # or from_pretrained(...)

`register_transformers()` registers the attention function under the name "flashcute" in
transformers' AttentionInterface (a plain dict, ALL_ATTENTION_FUNCTIONS, before 4.50) and, where
transformers builds masks through masking_utils (>= 4.53), a mask function under the same name that
returns None when nothing is padded and the (batch, kv_length) boolean padding mask otherwise, as
transformers does for its own flash_attention_2 backend, so that no dense (q x kv) mask is built.

What the attention function supports (everything else raises, nothing is silently changed):
  - causal or bidirectional attention (module.is_causal, or is_causal= from the caller), aligned
    bottom-right as in flash_attn (the last query sees the last key);
  - GQA/MQA natively (no repeat_kv), scaling, sliding_window (a window of that many keys, the
    query's own included), softcap;
  - padding: a 2D (batch, kv_length) mask (transformers >= 4.53 with our mask function) runs the
    varlen kernels on the unpadded tokens; padded query rows come out as 0, as with flash_attention_2;
  - a 4D mask (transformers < 4.53 builds one for every backend it does not know; also a user's
    custom mask) is accepted when it is exactly the causal/sliding-window band, i.e. carries no
    padding; any other 4D mask (padding in transformers < 4.53, a custom pattern, an additive bias)
    raises ValueError naming the alternatives;
  - packed sequences (batch 1): cu_seq_lens_q/k + max_length_q/k keyword arguments, or
    position_ids that restart, run the varlen kernels per sequence, as flash_attention_2 does;
  - dropout > 0 raises NotImplementedError (use model.eval() or attention_dropout=0).
"""

__all__ = ["register_transformers", "transformers_attention_forward", "transformers_attention_mask", "NAME"]

NAME = "flashcute"


def register_transformers(name=NAME):
    """Registers flashcute as `attn_implementation=name` in transformers. Returns the name.
    Safe to call more than once (registration is a dict update)."""
    try:
        import transformers  # noqa: F401
    except ImportError as exc:
        raise ImportError("flashcute.integrations.register_transformers: transformers is not installed") from exc

    try:
        from transformers import AttentionInterface  # transformers >= 4.50
    except ImportError:
        AttentionInterface = None
    if AttentionInterface is not None:
        AttentionInterface.register(name, transformers_attention_forward)
    else:  # 4.48-4.49: a module-level dict
        from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

        ALL_ATTENTION_FUNCTIONS[name] = transformers_attention_forward

    try:
        from transformers.masking_utils import AttentionMaskInterface  # transformers >= 4.53
    except ImportError:
        AttentionMaskInterface = None
    if AttentionMaskInterface is not None:
        AttentionMaskInterface.register(name, transformers_attention_mask)
    _answer_flash_preload(name)
    return name


def _answer_flash_preload(name):
    """transformers 5.x treats every implementation whose name contains "flash" as a flash-attention
    package (utils.generic.is_flash_attention_requested) and, when a model is built or switched to it,
    preloads that package through modeling_flash_attention_utils._lazy_imports, which fails for a name
    it does not know. For `name` the preload is answered with flashcute's flash_attn-compatible
    functions (no KV-cache function; transformers' own pad/unpad helpers); every other name goes to
    transformers' loader unchanged. The model's attention still goes through the function registered
    above, never through transformers' flash_attention_forward. Installed once, where transformers has
    that loader (4.x versions that never preload a registered function are unaffected)."""
    try:
        from transformers import modeling_flash_attention_utils as fau
    except ImportError:
        return
    loader = getattr(fau, "_lazy_imports", None)
    if loader is None or not hasattr(fau, "lazy_import_flash_attention") or not hasattr(fau, "_pad_input"):
        return
    names = getattr(loader, "_flashcute_names", None)
    if names is not None:  # already wrapped: remember one more name
        names.add(name)
        return
    import inspect

    try:  # the loader returns 5 functions where transformers knows a KV-cache function (5.x), else 4
        with_kvcache = "_flash_with_kvcache_fn" in inspect.getsource(fau.lazy_import_flash_attention)
    except (OSError, TypeError):  # no source to read: the current layout
        with_kvcache = True
    names = {name}

    def lazy_imports(implementation, *args, **kwargs):
        if implementation in names:
            from .flash_attn_interface import flash_attn_func, flash_attn_varlen_func

            if with_kvcache:
                return flash_attn_func, flash_attn_varlen_func, None, fau._pad_input, fau._unpad_input
            return flash_attn_func, flash_attn_varlen_func, fau._pad_input, fau._unpad_input
        return loader(implementation, *args, **kwargs)

    lazy_imports._flashcute_names = names
    fau._lazy_imports = lazy_imports


# ---- the mask function (masking_utils, transformers >= 4.53) ---------------------------------------------
def transformers_attention_mask(batch_size=None, kv_length=None, attention_mask=None, **kwargs):
    """None when no key is padded, else the (batch, kv_length) boolean mask of the keys to keep.

    Called by masking_utils with keyword arguments only (their set differs between versions: 4.53
    passes cache_position, 5.x q_length and q_offset). The causal / sliding-window pattern itself is
    never materialized: the attention function applies it from module.is_causal and sliding_window.
    The 2D mask is the last kv_length columns of the padding mask (a sliding-window layer's cache
    holds only the last keys)."""
    if attention_mask is None:
        return None
    attention_mask = attention_mask[:, -kv_length:]
    if attention_mask.shape[-1] == kv_length and bool(attention_mask.all()):
        return None
    return attention_mask


# ---- the attention function --------------------------------------------------------------------------------
def transformers_attention_forward(module, query, key, value, attention_mask, dropout=0.0, scaling=None,
                                   sliding_window=None, softcap=None, is_causal=None, **kwargs):
    """transformers' attention-function signature: query (batch, heads, q_len, d), key/value
    (batch, kv_heads, kv_len, d). Returns (out (batch, q_len, heads, d_v), None)."""
    from .flash_attn_interface import flash_attn_func, flash_attn_varlen_func

    if kwargs.get("output_attentions", False):
        raise ValueError("attn_implementation='flashcute' cannot return attention weights (output_attentions=True); "
                         "use attn_implementation='eager' for that")
    if kwargs.get("s_aux") is not None:
        raise NotImplementedError("attention sinks (s_aux) are not implemented in flashcute")

    causal = bool(is_causal if is_causal is not None else getattr(module, "is_causal", True))
    q_len, kv_len = query.shape[2], key.shape[2]
    window = _window(sliding_window, causal, kv_len)
    options = dict(dropout_p=float(dropout), softmax_scale=scaling, causal=causal, window_size=window,
                   softcap=float(softcap) if softcap else 0.0, deterministic=bool(kwargs.get("deterministic") or False))

    # (batch, heads, seq, d) -> flash_attn's (batch, seq, heads, d): views; the last dim stays contiguous.
    q, k, v = _to_kernel_dtype(*(t.transpose(1, 2) for t in (query, key, value)))
    batch = q.shape[0]

    key_mask = _key_padding_mask(attention_mask, q_len, kv_len, causal, window)
    if key_mask is not None:
        return _padded_attention(flash_attn_varlen_func, q, k, v, key_mask, options), None

    packed = _packed_sequences(kwargs, batch, q_len, kv_len, q.device)
    if packed is not None:
        cu_q, cu_k, max_q, max_k = packed
        out = flash_attn_varlen_func(*(t.reshape(-1, *t.shape[2:]) for t in (q, k, v)), cu_q, cu_k, max_q, max_k,
                                     **options)
        return out.view(batch, q_len, *out.shape[1:]), None

    return flash_attn_func(q, k, v, **options), None


def _window(sliding_window, causal, kv_len):
    """transformers' sliding_window w: a query sees the w most recent keys, itself included
    (masking_utils: kv_idx > q_idx - w). flash_attn's window is (w - 1, 0) causal, (w - 1, w - 1) not."""
    if sliding_window is None or sliding_window <= 0 or kv_len <= sliding_window:
        return (-1, -1)
    w = int(sliding_window) - 1
    return (w, 0 if causal else w)


def _to_kernel_dtype(q, k, v):
    """fp32 activations (e.g. layer norms kept in fp32) are cast to autocast's dtype when autocast is on;
    otherwise the kernels' validation reports the dtype."""
    import torch

    if q.dtype == torch.float32 and q.is_cuda and torch.is_autocast_enabled("cuda"):
        dtype = torch.get_autocast_dtype("cuda")
        q, k, v = q.to(dtype), k.to(dtype), v.to(dtype)
    return q, k, v


def _key_padding_mask(attention_mask, q_len, kv_len, causal, window):
    """The (batch, n <= kv_len) boolean keys-to-keep mask, or None when nothing is padded.

    2D masks are padding masks (the last kv_len columns). A 4D mask (boolean, True = attend, or additive,
    0 = attend) must be exactly the causal/window band on every batch and head: then nothing is padded."""
    import torch

    if attention_mask is None:
        return None
    if attention_mask.dim() == 2:
        mask = attention_mask[:, -kv_len:].to(dtype=torch.bool)
        return None if mask.shape[-1] == kv_len and bool(mask.all()) else mask
    if attention_mask.dim() != 4 or attention_mask.shape[-2] != q_len or attention_mask.shape[-1] < kv_len:
        raise ValueError(f"attention_mask: shape {tuple(attention_mask.shape)}; expected a 2D padding mask "
                         f"(batch, {kv_len}) or a 4D mask (batch, heads, {q_len}, >= {kv_len})")
    # transformers < 4.53 may build one more column than there are keys (a mask sized for the next token).
    m = attention_mask[..., :kv_len]
    keep = m if m.dtype == torch.bool else m == 0
    band = _band(q_len, kv_len, causal, window, m.device)
    if not bool((keep == band).all()):
        raise ValueError(
            "attention_mask: attn_implementation='flashcute' takes padding as a 2D mask (transformers >= 4.53 "
            "builds one for it); this 4D mask is not the plain causal/sliding-window pattern (padding in "
            "transformers < 4.53, a custom mask or an additive bias). Use attn_implementation='sdpa' or 'eager' "
            "for it, or transformers >= 4.53 for padded batches")
    return None


def _band(q_len, kv_len, causal, window, device):
    """(q_len, kv_len) boolean: query i sees key j, bottom-right aligned (flashcute's contract)."""
    import torch

    i = torch.arange(q_len, device=device)[:, None] + (kv_len - q_len)
    j = torch.arange(kv_len, device=device)[None, :]
    left, right = window
    right = 0 if causal else right
    band = torch.ones(q_len, kv_len, dtype=torch.bool, device=device)
    if left >= 0:
        band &= j >= i - left
    if right >= 0:
        band &= j <= i + right
    return band


def _cu_seqlens(lengths):
    import torch

    return torch.nn.functional.pad(lengths.cumsum(0, dtype=torch.int32), (1, 0))


def _padded_attention(varlen_fn, q, k, v, key_mask, options):
    """transformers' flash_attention_2 convention: keys kept by key_mask (a mask shorter than the keys
    covers the first keys: a static cache's filled slots); one query per sequence is always kept;
    otherwise queries are kept by the last q_len columns of the mask (left padding when q_len < kv_len).
    Runs varlen on the kept tokens and pads the output back with zeros."""
    import torch

    batch, q_len = q.shape[0], q.shape[1]
    key_mask = key_mask.to(q.device)
    n = key_mask.shape[1]
    k, v = k[:, :n], v[:, :n]
    query_mask = torch.ones(batch, 1, dtype=torch.bool, device=q.device) if q_len == 1 else key_mask[:, -q_len:]
    idx_k = key_mask.reshape(-1).nonzero().squeeze(1)
    idx_q = query_mask.reshape(-1).nonzero().squeeze(1)
    lens_k = key_mask.sum(1, dtype=torch.int32)
    lens_q = query_mask.sum(1, dtype=torch.int32)
    max_k, max_q = int(lens_k.max()), int(lens_q.max())
    qu = q.reshape(batch * q_len, *q.shape[2:]).index_select(0, idx_q)
    ku = k.reshape(batch * n, *k.shape[2:]).index_select(0, idx_k)
    vu = v.reshape(batch * n, *v.shape[2:]).index_select(0, idx_k)
    out = varlen_fn(qu, ku, vu, _cu_seqlens(lens_q), _cu_seqlens(lens_k), max_q, max_k, **options)
    padded = out.new_zeros(batch * q_len, *out.shape[1:]).index_copy(0, idx_q, out)
    return padded.view(batch, q_len, *out.shape[1:])


def _packed_sequences(kwargs, batch, q_len, kv_len, device):
    """(cu_seqlens_q, cu_seqlens_k, max_q, max_k) for packed sequences, or None.

    Either given (cu_seq_lens_q/k and max_length_q/k, transformers' padding-free keyword arguments), or
    found in position_ids (batch 1; a new sequence starts wherever the position does not continue by +1,
    as transformers' masks define packing). The detection reads position_ids on the host: one
    synchronization per call, as transformers' flash_attention_2 does."""
    import torch

    given = [kwargs.get(n) for n in ("cu_seq_lens_q", "cu_seq_lens_k", "max_length_q", "max_length_k")]
    if all(x is not None for x in given):
        cu_q, cu_k, max_q, max_k = given
        return (cu_q.to(device=device, dtype=torch.int32), cu_k.to(device=device, dtype=torch.int32), int(max_q),
                int(max_k))
    position_ids = kwargs.get("position_ids")
    if position_ids is None or batch != 1 or q_len <= 1 or q_len != kv_len or position_ids.numel() != q_len:
        return None
    pos = position_ids.reshape(-1).to(device)
    starts = torch.ones(q_len, dtype=torch.bool, device=device)
    starts[1:] = pos[1:] != pos[:-1] + 1
    if int(starts.sum()) <= 1:
        return None
    cu = torch.cat([starts.nonzero().squeeze(1), torch.tensor([q_len], device=device)]).to(torch.int32)
    max_len = int((cu[1:] - cu[:-1]).max())
    return cu, cu, max_len, max_len
