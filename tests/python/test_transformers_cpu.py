"""The transformers backend's own logic (flashcute.integrations) on the CPU: registration, masks,
unpadding, packed sequences, the KV-cache step, layouts and option mapping. The kernels are replaced
by the float64 reference (tests/python/torch_reference.py) behind the same flash_attn_func /
flash_attn_varlen_func signatures, so a float64 LlamaForCausalLM with attn_implementation="flashcute"
must give sdpa's logits and gradients to float64 rounding (rel. 1e-9). Whatever fails here is the
integration's fault, not a kernel's; test_transformers_gpu.py runs the real kernels.

Needs torch and transformers (no GPU, no compiled extension); skips with the reason otherwise.
"""

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the transformers integration is not tested here")
transformers = pytest.importorskip("transformers", reason="transformers is not installed")

from flashcute import flash_attn_interface, integrations  # noqa: E402
from torch_reference import default_dtype, padded_labels, padding_mask, reference, varlen_reference  # noqa: E402

try:
    from transformers import masking_utils
    from transformers.masking_utils import AttentionMaskInterface
except ImportError:  # transformers < 4.53
    masking_utils = AttentionMaskInterface = None

CONFIG = dict(vocab_size=300, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=512, attention_dropout=0.0, rms_norm_eps=1e-6)

calls = []


def fake_flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                         alibi_slopes=None, deterministic=False, return_attn_probs=False):
    assert dropout_p == 0.0 and alibi_slopes is None and not return_attn_probs
    calls.append(("dense", tuple(q.shape), causal, tuple(window_size)))
    return reference(q, k, v, softmax_scale=softmax_scale, causal=causal, window=window_size, softcap=softcap)[0]


def fake_flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p=0.0,
                                softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                                deterministic=False, return_attn_probs=False, block_table=None):
    assert dropout_p == 0.0 and alibi_slopes is None and block_table is None and not return_attn_probs
    assert cu_seqlens_q.dtype == torch.int32 and cu_seqlens_k.dtype == torch.int32
    lens_q, lens_k = cu_seqlens_q.diff().tolist(), cu_seqlens_k.diff().tolist()
    assert max(lens_q) <= max_seqlen_q and max(lens_k) <= max_seqlen_k
    assert cu_seqlens_q[-1] == q.shape[0] and cu_seqlens_k[-1] == k.shape[0]
    calls.append(("varlen", tuple(lens_q), tuple(lens_k), causal, tuple(window_size)))
    return varlen_reference(q, k, v, lens_q, lens_k, softmax_scale=softmax_scale, causal=causal, window=window_size,
                            softcap=softcap)[0]


@pytest.fixture(autouse=True)
def fake_kernels(monkeypatch):
    monkeypatch.setattr(flash_attn_interface, "flash_attn_func", fake_flash_attn_func)
    monkeypatch.setattr(flash_attn_interface, "flash_attn_varlen_func", fake_flash_attn_varlen_func)
    calls.clear()


@pytest.fixture(scope="module")
def models():
    integrations.register_transformers()
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    out = {}
    state = None
    for impl in ("sdpa", "flashcute"):
        with default_dtype(torch.float64):
            model = LlamaForCausalLM(LlamaConfig(**CONFIG, attn_implementation=impl))
        if state is None:
            state = model.state_dict()
        model.load_state_dict(state)
        out[impl] = model.eval()
        assert model.config._attn_implementation == impl
    return out


def forward_backward(model, input_ids, labels=None, **kwargs):
    model.zero_grad(set_to_none=True)
    logits = model(input_ids=input_ids, use_cache=False, **kwargs).logits
    lbl = input_ids if labels is None else labels
    loss = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), lbl[:, 1:].reshape(-1),
                                             ignore_index=-100)
    loss.backward()
    return logits.detach(), {n: p.grad for n, p in model.named_parameters()}


def assert_close(name, got, expected):
    scale = expected.abs().max().item() + 1e-30
    err = (got - expected).abs().max().item()
    assert err <= 1e-9 * scale, f"{name}: max err {err:.3e} (scale {scale:.3e})"


def compare(models, input_ids, select=None, **kwargs):
    lo, go = forward_backward(models["flashcute"], input_ids, **kwargs)
    ls, gs = forward_backward(models["sdpa"], input_ids, **kwargs)
    if select is not None:
        lo, ls = lo[select], ls[select]
    assert_close("logits", lo, ls)
    for name in gs:
        assert go[name] is not None, f"grad {name}: missing with flashcute"
        assert_close(f"grad {name}", go[name], gs[name])


def test_registration_is_idempotent_and_leaves_other_names_alone():
    assert integrations.register_transformers() == integrations.register_transformers() == "flashcute"
    try:
        from transformers import modeling_flash_attention_utils as fau
    except ImportError:
        return
    if hasattr(fau, "_lazy_imports") and hasattr(fau, "lazy_import_flash_attention"):
        # transformers 5 preloads every "*flash*" implementation when a model is built: ours answers it
        loaded = fau._lazy_imports("flashcute")
        assert loaded[0] is flash_attn_interface.flash_attn_func or loaded[0] is fake_flash_attn_func


def test_dense_batch_matches_sdpa(models):
    torch.manual_seed(1)
    compare(models, torch.randint(0, CONFIG["vocab_size"], (2, 37)))
    assert calls and all(c[0] == "dense" and c[2] is True for c in calls), calls


@pytest.mark.skipif(AttentionMaskInterface is None, reason="transformers < 4.53: padded batches raise instead")
@pytest.mark.parametrize("side", ["left", "right"])
def test_padded_batch_matches_sdpa(models, side):
    torch.manual_seed(2)
    b, s, pads = 3, 40, [0, 7, 25]
    input_ids = torch.randint(0, CONFIG["vocab_size"], (b, s))
    mask = padding_mask(b, s, pads, side, device="cpu")
    labels = padded_labels(input_ids, mask)
    compare(models, input_ids, select=mask.bool(), attention_mask=mask, labels=labels)
    assert calls and all(c[0] == "varlen" and c[1] == (40, 33, 15) for c in calls), calls


@pytest.mark.skipif(AttentionMaskInterface is None, reason="transformers < 4.53: no mask interface")
def test_unpadded_2d_mask_runs_dense(models):
    torch.manual_seed(3)
    input_ids = torch.randint(0, CONFIG["vocab_size"], (2, 21))
    compare(models, input_ids, attention_mask=torch.ones(2, 21, dtype=torch.long))
    assert calls and all(c[0] == "dense" for c in calls), calls


@pytest.mark.skipif(not hasattr(masking_utils, "find_packed_sequence_indices"),
                    reason="this transformers has no packed-sequence masks")
def test_packed_sequences_match_sdpa(models):
    torch.manual_seed(4)
    lens = [9, 1, 20]
    input_ids = torch.randint(0, CONFIG["vocab_size"], (1, sum(lens)))
    position_ids = torch.cat([torch.arange(n) for n in lens])[None]
    compare(models, input_ids, position_ids=position_ids)
    assert calls and all(c[0] == "varlen" and c[1] == tuple(lens) for c in calls), calls


def test_decode_step_with_cache_matches_sdpa(models):
    torch.manual_seed(5)
    input_ids = torch.randint(0, CONFIG["vocab_size"], (2, 18))
    logits = {}
    for name, model in models.items():
        with torch.no_grad():
            pre = model(input_ids=input_ids[:, :-1], use_cache=True)
            logits[name] = model(input_ids=input_ids[:, -1:], past_key_values=pre.past_key_values,
                                 use_cache=True).logits
    assert_close("decode logits", logits["flashcute"], logits["sdpa"])
    assert ("dense", (2, 1, 4, 16), True, (-1, -1)) in calls, calls


class _Module(torch.nn.Module):
    is_causal = True


def test_layouts_and_option_mapping():
    torch.manual_seed(6)
    b, hq, hk, s, d = 2, 4, 2, 12, 8
    q, k, v = torch.randn(b, hq, s, d), torch.randn(b, hk, s, d), torch.randn(b, hk, s, d)
    out, weights = integrations.transformers_attention_forward(_Module(), q, k, v, None, scaling=0.3,
                                                               sliding_window=5, softcap=7.0)
    assert weights is None and out.shape == (b, s, hq, d)
    assert calls == [("dense", (b, s, hq, d), True, (4, 0))]
    expected = reference(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), softmax_scale=0.3, causal=True,
                         window=(4, 0), softcap=7.0)[0]
    assert torch.equal(out, expected)
    # not causal: a symmetric window; a window covering every key is no window
    calls.clear()
    integrations.transformers_attention_forward(_Module(), q, k, v, None, is_causal=False, sliding_window=5)
    integrations.transformers_attention_forward(_Module(), q, k, v, None, sliding_window=s)
    assert calls == [("dense", (b, s, hq, d), False, (4, 4)), ("dense", (b, s, hq, d), True, (-1, -1))]


def test_4d_masks():
    torch.manual_seed(7)
    b, h, s, d = 2, 2, 10, 8
    q, k, v = (torch.randn(b, h, s, d) for _ in range(3))
    causal = torch.ones(s, s + 1, dtype=torch.bool).tril()  # one column more than the keys, as in 4.48
    additive = torch.zeros(s, s + 1).masked_fill(~causal, torch.finfo(torch.float32).min)
    for mask in (causal, additive):
        calls.clear()
        integrations.transformers_attention_forward(_Module(), q, k, v, mask[None, None].expand(b, 1, s, s + 1))
        assert calls == [("dense", (b, s, h, d), True, (-1, -1))]
    padded = causal[None, None].repeat(b, 1, 1, 1)
    padded[1, :, :, :3] = False
    with pytest.raises(ValueError, match="not the plain causal/sliding-window pattern"):
        integrations.transformers_attention_forward(_Module(), q, k, v, padded)
    with pytest.raises(ValueError, match="expected a 2D padding mask"):
        integrations.transformers_attention_forward(_Module(), q, k, v, causal[None])


def test_unsupported_requests_raise():
    q = torch.randn(1, 2, 4, 8)
    with pytest.raises(ValueError, match="output_attentions"):
        integrations.transformers_attention_forward(_Module(), q, q, q, None, output_attentions=True)
    with pytest.raises(NotImplementedError, match="attention sinks"):
        integrations.transformers_attention_forward(_Module(), q, q, q, None, s_aux=torch.zeros(2))
