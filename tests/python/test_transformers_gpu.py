"""The Hugging Face transformers backend (flashcute.integrations): a small randomly-initialized
LlamaForCausalLM (built from a LlamaConfig, no download) gives the same logits and parameter
gradients with attn_implementation="flashcute" as with "sdpa".

The tolerance rule (the model-level form of docs/TESTING.md's): the same weights (one random
initialization rounded to bf16) run three times,
  ref   float64 model, "sdpa" (PyTorch's math path in float64): the golden model (transformers
        keeps RMSNorm and the rotary tables in float32: errors ~1e-7, far below bf16's ~4e-3)
  sdpa  bf16 weights, "sdpa"                                       : what users run today
  ours  bf16 weights, "flashcute"
and for the logits and every parameter gradient X:
  max|ours - ref|  <= R * max|sdpa - ref|       R = 2 for logits, 3 for gradients
  mean|ours - ref| <= 1.5 * mean|sdpa - ref|
i.e. swapping the attention backend may not make the bf16 model measurably less accurate. Both bf16
runs share every rounding outside attention, so their errors are close; a wrong mask, scale or
gradient in attention is far outside these bounds.

Skips (visibly) without torch, transformers, a CUDA device or the extension.
"""

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the transformers tests need it")
transformers = pytest.importorskip("transformers", reason="transformers is not installed")

import flashcute  # noqa: E402
from flashcute import integrations  # noqa: E402
from torch_reference import default_dtype, gpu_marks, padded_labels, padding_mask, run_or_skip  # noqa: E402


def on_gpu(test):
    """The marks of a test that needs the GPU (the registration test does not)."""
    for mark in gpu_marks("the transformers GPU tests"):
        test = mark(test)
    return test



try:
    from transformers import masking_utils
    from transformers.masking_utils import AttentionMaskInterface
except ImportError:  # transformers < 4.53: models build 4D masks themselves
    masking_utils = AttentionMaskInterface = None

needs_mask_interface = pytest.mark.skipif(
    AttentionMaskInterface is None,
    reason=f"transformers {transformers.__version__} has no masking_utils.AttentionMaskInterface (< 4.53): padded "
    "batches raise ValueError there instead of running")

# head_dim = 512 / 4 = 128 (compiled in every preset); GQA 2
CONFIG = dict(vocab_size=1000, hidden_size=512, intermediate_size=1024, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=1024, attention_dropout=0.0, rms_norm_eps=1e-6)


# ---- registration (no GPU needed) ----------------------------------------------------------------------------
def test_register_is_idempotent_and_visible_to_transformers():
    assert integrations.register_transformers() == "flashcute"
    assert integrations.register_transformers() == "flashcute"
    try:
        from transformers import AttentionInterface

        registered = AttentionInterface()["flashcute"]
    except ImportError:  # 4.48-4.49
        from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

        registered = ALL_ATTENTION_FUNCTIONS["flashcute"]
    assert registered is integrations.transformers_attention_forward
    if AttentionMaskInterface is not None:
        assert AttentionMaskInterface()["flashcute"] is integrations.transformers_attention_mask


# ---- the model ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def models():
    """{name: model} for ref (float64, sdpa), sdpa (bf16) and ours (bf16, flashcute). The weights are one
    random initialization rounded to bf16, so that all three compute with the same values (the golden
    model's error is then that of float64 arithmetic, not of the weights' rounding). Each model is built
    under its dtype as the default, as from_pretrained(dtype=...) does: buffers that transformers
    computes in float32 (the rotary frequencies) stay float32 in every model."""
    integrations.register_transformers()
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    base = LlamaForCausalLM(LlamaConfig(**CONFIG, attn_implementation="sdpa"))
    state = {k: v.to(torch.bfloat16) for k, v in base.state_dict().items()}
    out = {}
    for name, impl, dtype in (("ref", "sdpa", torch.float64), ("sdpa", "sdpa", torch.bfloat16),
                              ("ours", "flashcute", torch.bfloat16)):
        with default_dtype(dtype):
            model = LlamaForCausalLM(LlamaConfig(**CONFIG, attn_implementation=impl))
        model.load_state_dict(state)
        out[name] = model.to("cuda").eval()
        assert out[name].config._attn_implementation == impl
        assert out[name].lm_head.weight.dtype == dtype
    return out


def run(model, input_ids, grads=True, **kwargs):
    """(logits, {param name: grad}) of one forward and the backward of the mean next-token cross-entropy
    (in float64, over the labels that are not -100)."""
    model.zero_grad(set_to_none=True)
    labels = kwargs.pop("labels", None)
    with torch.set_grad_enabled(grads):
        res = model(input_ids=input_ids, use_cache=False, **kwargs)
        logits = res.logits
        if grads:
            lbl = input_ids if labels is None else labels
            loss = torch.nn.functional.cross_entropy(logits[:, :-1].double().reshape(-1, logits.shape[-1]),
                                                     lbl[:, 1:].reshape(-1), ignore_index=-100)
            loss.backward()
    g = {n: p.grad for n, p in model.named_parameters()} if grads else {}
    return logits.detach(), g


def check_against_sdpa(name, ours, sdpa, ref, r, repro):
    ours, sdpa, ref = ours.double(), sdpa.double(), ref.double()
    assert torch.isfinite(ours).all(), f"{name}: non-finite values; {repro}"
    e_ours, e_sdpa = (ours - ref).abs(), (sdpa - ref).abs()
    assert e_ours.max() <= r * e_sdpa.max(), \
        f"{name}: max err {e_ours.max():.3e} > {r} x sdpa's {e_sdpa.max():.3e}; {repro}"
    assert e_ours.mean() <= 1.5 * e_sdpa.mean(), \
        f"{name}: mean err {e_ours.mean():.3e} > 1.5 x sdpa's {e_sdpa.mean():.3e}; {repro}"


def compare(models, input_ids, repro, select=None, **kwargs):
    """Runs the three models and applies the rule to logits (rows picked by `select`) and gradients."""
    results = {name: run(m, input_ids, **kwargs) for name, m in models.items() if name != "ours"}
    results["ours"] = run_or_skip(run, models["ours"], input_ids, **kwargs)
    (lo, go), (ls, gs), (lr, gr) = results["ours"], results["sdpa"], results["ref"]
    if select is not None:
        lo, ls, lr = lo[select], ls[select], lr[select]
    check_against_sdpa("logits", lo, ls, lr, 2, repro)
    assert go.keys() == gr.keys() and len(go) > 0
    for pname in go:
        assert go[pname] is not None, f"{pname}: no gradient with flashcute; {repro}"
        check_against_sdpa(f"grad {pname}", go[pname], gs[pname], gr[pname], 3, repro)


@on_gpu
@pytest.mark.parametrize("batch, seqlen", [(2, 200), (1, 129)])
def test_llama_logits_and_gradients_match_sdpa(models, batch, seqlen):
    torch.manual_seed(1)
    input_ids = torch.randint(0, CONFIG["vocab_size"], (batch, seqlen), device="cuda")
    compare(models, input_ids, f"REPRO: llama batch={batch} seqlen={seqlen} seed=1")


@on_gpu
@needs_mask_interface
@pytest.mark.parametrize("side", ["left", "right"])
def test_llama_padded_batch_matches_sdpa(models, side):
    """A padded batch (2D attention_mask): flashcute unpads and runs varlen. Compared on the real tokens
    only (padded positions are 0 in flashcute's output, unspecified in sdpa's)."""
    torch.manual_seed(2)
    b, s, pads = 3, 160, [0, 37, 100]
    input_ids = torch.randint(0, CONFIG["vocab_size"], (b, s), device="cuda")
    mask = padding_mask(b, s, pads, side, device="cuda")
    labels = padded_labels(input_ids, mask)
    compare(models, input_ids, f"REPRO: llama padded side={side} pads={pads} seed=2", select=mask.bool(),
            attention_mask=mask, labels=labels)


@on_gpu
@pytest.mark.skipif(not hasattr(masking_utils, "find_packed_sequence_indices"),
                    reason="this transformers has no packed-sequence masks (masking_utils.find_packed_sequence_indices)")
def test_llama_packed_sequences_match_sdpa(models):
    """Batch 1 holding three sequences (position_ids restart at 0): no attention across sequences."""
    torch.manual_seed(3)
    lens = [50, 1, 90]
    input_ids = torch.randint(0, CONFIG["vocab_size"], (1, sum(lens)), device="cuda")
    position_ids = torch.cat([torch.arange(n, device="cuda") for n in lens])[None]
    compare(models, input_ids, f"REPRO: llama packed lens={lens} seed=3", position_ids=position_ids)


@on_gpu
def test_llama_decode_step_with_cache_matches_sdpa(models):
    """Prefill then one token with the KV cache (q_len 1, kv_len 101: bottom-right alignment)."""
    torch.manual_seed(4)
    input_ids = torch.randint(0, CONFIG["vocab_size"], (2, 101), device="cuda")
    logits = {}
    for name, model in models.items():
        with torch.no_grad():
            def step(model=model):
                pre = model(input_ids=input_ids[:, :-1], use_cache=True)
                return model(input_ids=input_ids[:, -1:], past_key_values=pre.past_key_values, use_cache=True).logits

            logits[name] = run_or_skip(step) if name == "ours" else step()
    check_against_sdpa("decode logits", logits["ours"], logits["sdpa"], logits["ref"], 2,
                       "REPRO: llama decode step seed=4")


# ---- the attention function on its own ----------------------------------------------------------------------
class _Module(torch.nn.Module):
    is_causal = True


@on_gpu
@pytest.mark.parametrize("additive", [False, True])
def test_4d_masks_without_padding_run_and_others_raise(additive):
    torch.manual_seed(5)
    b, hq, hk, s, d = 2, 4, 2, 64, 128
    q = torch.randn(b, hq, s, d, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(b, hk, s, d, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(b, hk, s, d, device="cuda", dtype=torch.bfloat16)
    expected, none = run_or_skip(integrations.transformers_attention_forward, _Module(), q, k, v, None)
    assert none is None and expected.shape == (b, s, hq, d)
    causal = torch.ones(s, s + 1, dtype=torch.bool, device="cuda").tril()  # one extra column, as transformers 4.48
    mask = causal if not additive else torch.zeros(s, s + 1, device="cuda").masked_fill(~causal, -1e30)
    out, _ = integrations.transformers_attention_forward(_Module(), q, k, v, mask[None, None].expand(b, 1, -1, -1))
    assert torch.equal(out, expected)
    padded = mask.clone()[None, None].repeat(b, 1, 1, 1)
    padded[1, :, :, :5] = False if not additive else -1e30
    with pytest.raises(ValueError, match="not the plain causal/sliding-window pattern"):
        integrations.transformers_attention_forward(_Module(), q, k, v, padded)


@on_gpu
def test_sliding_window_and_softcap_map_to_flash_attn_options():
    torch.manual_seed(6)
    b, h, s, d = 1, 4, 96, 128
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    out, _ = run_or_skip(integrations.transformers_attention_forward, _Module(), q, k, v, None, scaling=0.1,
                         sliding_window=16, softcap=20.0)
    expected = flashcute.flash_attn_func(*(t.transpose(1, 2) for t in (q, k, v)), softmax_scale=0.1, causal=True,
                                         window_size=(15, 0), softcap=20.0)
    assert torch.equal(out, expected)
