"""The Python package on a GPU: flash_attn_* against a float64 PyTorch reference with the tolerance
rule of docs/TESTING.md, streams, devices, CUDA graphs, torch.compile, opcheck, and DLPack from
torch and CuPy. Skips (visibly) without torch, without a CUDA device or without the extension.

A case whose dtype / head-dim bucket is not compiled into this build is skipped with the library's
message (NotImplementedError "... not compiled into this build ..."). Gradients: test_bwd_gpu.py.

Tolerance (TESTING.md; tests/python/torch_reference.py implements it, tests/common/tolerance.h is
the C++ twin): golden = float64 math on the
rounded inputs, lp = the same math the way an unfused implementation in the input dtype does it
(fp32 scores and softmax, product inputs rounded to the dtype), then
  max|kernel - golden|  <= R * max|lp - golden| + 2 ulp(max|golden|)        R = 2 fwd, 3 bwd
  mean|kernel - golden| <= max(1.5 * mean|lp - golden|, 0.25 * mean ulp(golden))
  lse: |lse - golden| <= 1e-5 * (1 + |golden|), -inf exactly where golden is -inf.
"""

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the GPU tests of the package need it")

import flashcute  # noqa: E402
from flashcute import ops  # noqa: E402
from torch_reference import (  # noqa: E402  (tests/python/torch_reference.py: the shared oracle)
    BF16, FP16, check_lse, check_tolerance, gpu_marks, make_alibi, randn, reference, run_or_skip)

pytestmark = gpu_marks()

# ---- dense forward --------------------------------------------------------------------------------------
# (batch, seqlen_q, seqlen_k, heads_q, heads_kv, d, dtype, options)
DENSE = [
    (2, 128, 128, 4, 4, 128, BF16, {}),
    (2, 113, 203, 4, 4, 128, BF16, {"causal": True}),
    (2, 203, 113, 4, 4, 128, BF16, {"causal": True}),  # rows that see no key
    (2, 256, 256, 8, 2, 128, BF16, {"causal": True}),  # GQA 4
    (1, 239, 239, 6, 1, 128, BF16, {}),  # MQA
    (1, 300, 300, 4, 4, 128, BF16, {"window_size": (64, 16)}),
    (1, 300, 300, 4, 4, 128, BF16, {"window_size": (32, 0)}),
    (2, 128, 257, 4, 4, 128, BF16, {"softcap": 30.0}),
    (2, 128, 128, 4, 4, 128, BF16, {"alibi": "heads"}),
    (2, 97, 128, 4, 2, 128, BF16, {"alibi": "batch_heads", "causal": True}),
    (2, 128, 128, 4, 4, 128, BF16, {"softmax_scale": 0.05}),
    (2, 128, 128, 4, 4, 64, BF16, {"causal": True}),
    (2, 128, 128, 4, 4, 96, BF16, {}),
    (1, 1, 3, 4, 4, 128, BF16, {}),
    (2, 128, 128, 4, 4, 128, FP16, {"causal": True}),
    (2, 64, 512, 4, 4, 256, BF16, {}),
]


def dense_id(case):
    b, sq, sk, hq, hk, d, dt, opt = case
    extra = "-".join(f"{k}={v}" for k, v in opt.items())
    return f"b{b}-q{sq}-k{sk}-h{hq}:{hk}-d{d}-{str(dt)[6:]}" + (f"-{extra}" if extra else "")


@pytest.mark.parametrize("case", DENSE, ids=[dense_id(c) for c in DENSE])
def test_flash_attn_func_forward(case):
    b, sq, sk, hq, hk, d, dt, opt = case
    torch.manual_seed(0)
    q, k, v = randn(b, sq, hq, d, dtype=dt), randn(b, sk, hk, d, dtype=dt), randn(b, sk, hk, d, dtype=dt)
    opt = dict(opt)
    alibi = make_alibi(opt.pop("alibi"), b, hq) if "alibi" in opt else None
    out, lse, probs = run_or_skip(flashcute.flash_attn_func, q, k, v, alibi_slopes=alibi, return_attn_probs=True,
                                  **opt)
    assert out.dtype == dt and out.shape == (b, sq, hq, d) and probs is None
    assert lse.dtype == torch.float32 and lse.shape == (b, hq, sq)
    ref_opt = dict(softmax_scale=opt.get("softmax_scale"), causal=opt.get("causal", False),
                   window=opt.get("window_size", (-1, -1)), softcap=opt.get("softcap", 0.0), alibi=alibi)
    golden, lse_golden = reference(q, k, v, **ref_opt)
    lp, _ = reference(q, k, v, lowp=True, **ref_opt)
    repro = f"REPRO: {dense_id(case)} seed=0"
    check_tolerance("out", out, golden, lp, dt, 2, repro)
    check_lse(lse, lse_golden, repro)


def test_packed_variants_match_unpacked():
    torch.manual_seed(1)
    b, s, h, d = 2, 192, 4, 128
    qkv = randn(b, s, 3, h, d)
    q, k, v = (t.contiguous() for t in qkv.unbind(2))
    ref = run_or_skip(flashcute.flash_attn_func, q, k, v, causal=True)
    assert torch.equal(flashcute.flash_attn_qkvpacked_func(qkv, causal=True), ref)
    assert torch.equal(flashcute.flash_attn_kvpacked_func(q, qkv[:, :, 1:], causal=True), ref)


def test_strided_inputs():
    # q/k/v as slices of wider buffers (outer strides only): same answer as contiguous copies.
    torch.manual_seed(2)
    big = randn(2, 160, 6, 192)
    q, k, v = big[:, :, :4, :128], big[:, 32:, 1:5, 64:], big[:, 32:, 2:6, :128]
    ref = run_or_skip(flashcute.flash_attn_func, q.contiguous(), k.contiguous(), v.contiguous())
    assert torch.equal(flashcute.flash_attn_func(q, k, v), ref)


# ---- varlen ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("causal", [False, True])
def test_flash_attn_varlen_func(causal):
    torch.manual_seed(3)
    hq, hk, d = 8, 2, 128
    lens_q = [37, 0, 128, 1, 203, 64, 5]  # the last 5 queries see no key: out 0, lse -inf
    lens_k = [37, 5, 100, 17, 203, 64, 0]
    cu_q = torch.tensor([0] + list(torch.tensor(lens_q).cumsum(0)), dtype=torch.int32, device="cuda")
    cu_k = torch.tensor([0] + list(torch.tensor(lens_k).cumsum(0)), dtype=torch.int32, device="cuda")
    q, k, v = randn(sum(lens_q), hq, d), randn(sum(lens_k), hk, d), randn(sum(lens_k), hk, d)
    max_q, max_k = max(lens_q) + 7, max(lens_k)  # a larger max_seqlen gives the same answer
    out, lse, _ = run_or_skip(flashcute.flash_attn_varlen_func, q, k, v, cu_q, cu_k, max_q, max_k, causal=causal,
                              return_attn_probs=True)
    assert out.shape == q.shape and lse.shape == (hq, sum(lens_q))
    for i, (lq, lk) in enumerate(zip(lens_q, lens_k)):
        if lq == 0:
            continue
        sq0, sk0 = int(cu_q[i]), int(cu_k[i])
        qs, ks, vs = q[sq0:sq0 + lq][None], k[sk0:sk0 + lk][None], v[sk0:sk0 + lk][None]
        golden, lse_golden = reference(qs, ks, vs, causal=causal)
        lp, _ = reference(qs, ks, vs, causal=causal, lowp=True)
        repro = f"REPRO: varlen seq {i} (lq={lq}, lk={lk}) causal={causal} seed=3"
        check_tolerance("out", out[sq0:sq0 + lq][None], golden, lp, BF16, 2, repro)
        check_lse(lse[:, sq0:sq0 + lq][None], lse_golden, repro)
    # packed forms give the same bits as the unpacked call
    cu = cu_q
    qkv = randn(sum(lens_q), 3, hq, d)
    ref = flashcute.flash_attn_varlen_func(*(t.contiguous() for t in qkv.unbind(1)), cu, cu, max(lens_q),
                                           max(lens_q), causal=causal)
    assert torch.equal(flashcute.flash_attn_varlen_qkvpacked_func(qkv, cu, max(lens_q), causal=causal), ref)
    kv = torch.stack([k, v], dim=1)
    ref = flashcute.flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k, causal=causal)
    assert torch.equal(flashcute.flash_attn_varlen_kvpacked_func(q, kv, cu_q, cu_k, max_q, max_k, causal=causal), ref)


# ---- streams, devices, graphs, compile ------------------------------------------------------------------
def test_runs_on_the_current_stream():
    """The op reads its inputs on torch's current stream: an input written on a non-default stream
    after a long sleep is seen (a launch on another stream would read the stale values)."""
    if not hasattr(torch.cuda, "_sleep"):
        pytest.skip("torch.cuda._sleep is not available")
    torch.manual_seed(4)
    q, k, v = randn(2, 256, 4, 128), randn(2, 256, 4, 128), randn(2, 256, 4, 128)
    expected = run_or_skip(flashcute.flash_attn_func, q, k, v, causal=True)
    q_stale = torch.zeros_like(q)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)  # ~tens of ms of GPU time before the copy
        q_stale.copy_(q)
        out = flashcute.flash_attn_func(q_stale, k, v, causal=True)
    torch.cuda.current_stream().wait_stream(side)
    assert torch.equal(out, expected)


def test_non_zero_device_index():
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two CUDA devices (this machine has one)")
    torch.manual_seed(5)
    q, k, v = randn(1, 128, 4, 128), randn(1, 128, 4, 128), randn(1, 128, 4, 128)
    expected = run_or_skip(flashcute.flash_attn_func, q, k, v)
    dev = torch.device("cuda", 1)
    with torch.cuda.device(0):
        out = flashcute.flash_attn_func(q.to(dev), k.to(dev), v.to(dev))
    assert out.device == dev and torch.equal(out.cpu(), expected.cpu())


def test_cuda_graph_capture():
    torch.manual_seed(6)
    q, k, v = randn(2, 256, 4, 128), randn(2, 256, 4, 128), randn(2, 256, 4, 128)
    run_or_skip(flashcute.flash_attn_func, q, k, v, causal=True)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the capture, as torch recommends
        flashcute.flash_attn_func(q, k, v, causal=True)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = flashcute.flash_attn_func(q, k, v, causal=True)
    q.copy_(randn(2, 256, 4, 128))
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, flashcute.flash_attn_func(q, k, v, causal=True))


def test_forward_workspaces_stay_zero():
    """The op passes each (device, stream) one workspace zeroed once, as Workspace::zeroed (no reset per
    call): the Hopper kernel's dynamic tile counter must be left zero by every launch, on every stream,
    or a later call would skip or repeat tiles. A problem of many tiles per SM (d 128, 1k keys: the
    dynamic persistent kernel on sm_90: 512 tiles), repeated on two streams, gives the first call's bits."""
    from flashcute import _torch_ops

    torch.manual_seed(9)
    q, k, v = randn(4, 1024, 16, 128), randn(4, 1024, 16, 128), randn(4, 1024, 16, 128)
    first = run_or_skip(flashcute.flash_attn_func, q, k, v, causal=True)
    golden, _ = reference(q, k, v, causal=True)
    lp, _ = reference(q, k, v, causal=True, lowp=True)
    check_tolerance("out", first, golden, lp, q.dtype, 2, "REPRO: b4-q1024-k1024-h16-d128-bf16-causal seed=9")
    assert ops.fwd_workspace_size(q, k, v, torch.empty_like(q), causal=True) <= _torch_ops._FWD_ZEROED_BYTES
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    outs = [flashcute.flash_attn_func(q, k, v, causal=True) for _ in range(3)]
    with torch.cuda.stream(side):
        outs += [flashcute.flash_attn_func(q, k, v, causal=True) for _ in range(3)]
    torch.cuda.synchronize()
    for out in outs:
        assert torch.equal(out, first)
    keys = [key for key in _torch_ops._fwd_zeroed if key[0] == q.device.index]
    assert len(keys) >= 2, keys  # the current stream's and the side stream's
    for key in keys:
        assert int(_torch_ops._fwd_zeroed[key].count_nonzero()) == 0, key


def test_torch_compile_fullgraph():
    torch.manual_seed(7)
    q, k, v = randn(2, 128, 8, 128), randn(2, 128, 2, 128), randn(2, 128, 2, 128)
    expected = run_or_skip(flashcute.flash_attn_func, q, k, v, causal=True)

    def f(q, k, v):
        return flashcute.flash_attn_func(q, k, v, causal=True) * 2

    compiled = torch.compile(f, fullgraph=True)
    assert torch.equal(compiled(q, k, v), expected * 2)


def test_opcheck_forward():
    torch.manual_seed(8)
    q, k, v = randn(2, 64, 4, 128), randn(2, 64, 4, 128), randn(2, 64, 4, 128)
    run_or_skip(flashcute.flash_attn_func, q, k, v)
    args = (q, k, v, None, True, -1, -1, 0.0, None, False, "auto")
    torch.library.opcheck(torch.ops.flashcute.fwd.default, args,
                          test_utils=("test_schema", "test_faketensor", "test_aot_dispatch_dynamic"))


# ---- DLPack: the framework-neutral layer ---------------------------------------------------------------
def test_ops_on_torch_tensors_through_dunder_dlpack():
    torch.manual_seed(9)
    q, k, v = randn(2, 128, 4, 128), randn(2, 128, 4, 128), randn(2, 128, 4, 128)
    expected, lse_expected, _ = run_or_skip(flashcute.flash_attn_func, q, k, v, causal=True, return_attn_probs=True)
    out, lse = torch.empty_like(q), torch.empty(2, 4, 128, device="cuda", dtype=torch.float32)
    ops.fwd(q, k, v, out, lse, causal=True, stream=torch.cuda.current_stream())
    assert torch.equal(out, expected) and torch.equal(lse, lse_expected)


def test_cupy_round_trip():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    torch.manual_seed(10)
    q, k, v = (randn(2, 128, 4, 128, dtype=FP16) for _ in range(3))  # CuPy has no bfloat16
    expected = run_or_skip(flashcute.flash_attn_func, q, k, v, causal=True)
    torch.cuda.synchronize()
    qc, kc, vc = (cupy.from_dlpack(t) for t in (q, k, v))
    out = cupy.empty_like(qc)
    lse = cupy.empty((2, 4, 128), dtype=cupy.float32)
    with cupy.cuda.Stream(non_blocking=True) as stream:
        ops.fwd(qc, kc, vc, out, lse, causal=True, stream=stream)
        stream.synchronize()
    assert torch.equal(torch.from_dlpack(out), expected)


def test_bad_input_on_the_gpu():
    q = randn(2, 64, 4, 128)
    with pytest.raises(TypeError, match=r"^q: dtype float32 is not supported; expected float16 or bfloat16$"):
        flashcute.flash_attn_func(q.float(), q.float(), q.float())
    with pytest.raises(TypeError, match=r"^k: dtype float16 does not match q's dtype bfloat16$"):
        flashcute.flash_attn_func(q, q.half(), q)
    with pytest.raises(ValueError, match=r"^q: head_dim=59 must be a multiple of 8$"):
        x = randn(2, 64, 4, 59)
        flashcute.flash_attn_func(x, x, x)
    with pytest.raises(ValueError, match=r"^k: heads_kv=3 does not divide heads_q=4$"):
        kv = randn(2, 64, 3, 128)
        flashcute.flash_attn_func(q, kv, kv)
    with pytest.raises(ValueError, match=r"^q: tensor is on cpu; expected a CUDA device tensor$"):
        flashcute.flash_attn_func(q.cpu(), q, q)


# ---- the oracle itself (backward: test_bwd_gpu.py) ----------------------------------------------------
def test_math_reference_self_check():
    # The reference against PyTorch's own math SDPA (float64), so a reference bug cannot hide a kernel bug.
    torch.manual_seed(12)
    q, k, v = (torch.randn(2, 64, 4, 32, device="cuda", dtype=torch.float64) for _ in range(3))
    ours, _ = reference(q, k, v, causal=True)
    sdpa = torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                            is_causal=True).transpose(1, 2)
    assert torch.allclose(ours, sdpa, atol=1e-12), (ours - sdpa).abs().max()
