"""Gradients of every flash_attn_* function through torch.autograd on a GPU, against the float64
reference with the backward tolerance rule (R = 3; tests/python/torch_reference.py, whose lp gradients
follow the C++ oracle's backward_lowp, given the forward output the kernel's backward saw): GQA/MQA,
varlen (zero-length sequences, queries that see no key), windows, softcap, ALiBi, causal, custom
scale, fp16 and bf16; deterministic=True is bitwise repeatable; a non-default stream, a non-zero
device index, torch.compile and opcheck of the backward op. Skips (visibly) without torch, a CUDA
device or the extension; a case whose dtype / head dim / pass is not compiled into this build skips
with the library's message.
"""

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the GPU tests of the package need it")

import flashcute  # noqa: E402
from torch_reference import (  # noqa: E402  (tests/python/torch_reference.py: the shared oracle)
    BF16, FP16, check_grads, cu_seqlens, gpu_marks, make_alibi, oracle_grads, randn, run_or_skip)

pytestmark = gpu_marks()


def leaves(*tensors):
    return [t.detach().clone().requires_grad_() for t in tensors]


def kernel_grads(fn, inputs, dout, with_out=False):
    """Runs fn on fresh leaf copies of inputs and backpropagates dout; the grads (skip if not built),
    and with with_out the forward output the backward was given (the lp oracle takes D from it)."""
    xs = leaves(*inputs)
    out = run_or_skip(fn, *xs)
    run_or_skip(out.backward, dout)
    grads = [x.grad for x in xs]
    return (grads, out.detach()) if with_out else grads


def ref_options(opt, alibi):
    return dict(softmax_scale=opt.get("softmax_scale"), causal=opt.get("causal", False),
                window=opt.get("window_size", (-1, -1)), softcap=opt.get("softcap", 0.0), alibi=alibi)


def kernel_options(opt, alibi):
    return {k: v for k, v in opt.items() if k not in ("alibi", "x")} | {"alibi_slopes": alibi}


# ---- dense: flash_attn_func ----------------------------------------------------------------------------
# (batch, seqlen_q, seqlen_k, heads_q, heads_kv, d, dtype, options); "x": inputs scaled (randn * x)
DENSE = [
    (2, 128, 128, 4, 4, 128, BF16, {}),
    (2, 113, 203, 8, 2, 128, BF16, {"causal": True}),  # GQA 4, seqlen_q < seqlen_k
    (2, 203, 113, 4, 4, 128, BF16, {"causal": True}),  # 90 rows see no key: their dq is exactly 0
    (1, 239, 239, 6, 1, 128, BF16, {}),  # MQA
    (1, 300, 300, 4, 4, 128, BF16, {"window_size": (64, 16)}),
    (1, 300, 300, 9, 3, 128, BF16, {"window_size": (32, 0), "softcap": 30.0}),
    (2, 128, 257, 4, 4, 128, BF16, {"softcap": 30.0}),
    (2, 128, 128, 4, 4, 128, BF16, {"alibi": "heads"}),
    (2, 97, 128, 4, 2, 128, BF16, {"alibi": "batch_heads", "causal": True}),
    (2, 128, 128, 4, 4, 128, BF16, {"softmax_scale": 0.05}),
    (2, 128, 128, 4, 4, 64, BF16, {"causal": True}),
    (2, 128, 128, 4, 4, 96, BF16, {}),
    (2, 128, 128, 4, 4, 128, FP16, {"causal": True}),
    (2, 130, 130, 4, 2, 128, FP16, {"x": 3.0}),
    (1, 64, 64, 4, 4, 128, BF16, {"x": 5.0, "causal": True}),
    (1, 1, 3, 4, 4, 128, BF16, {}),
    (3, 255, 255, 8, 8, 128, BF16, {"causal": True, "deterministic": True}),
    (1, 64, 300, 4, 4, 256, BF16, {}),
]


def dense_id(case):
    b, sq, sk, hq, hk, d, dt, opt = case
    extra = "-".join(f"{k}={v}" for k, v in opt.items())
    return f"b{b}-q{sq}-k{sk}-h{hq}:{hk}-d{d}-{str(dt)[6:]}" + (f"-{extra}" if extra else "")


def dense_inputs(case, seed):
    b, sq, sk, hq, hk, d, dt, opt = case
    torch.manual_seed(seed)
    x = opt.get("x", 1.0)
    q, k, v = randn(b, sq, hq, d, dtype=dt, scale=x), randn(b, sk, hk, d, dtype=dt, scale=x), randn(b, sk, hk, d,
                                                                                                    dtype=dt, scale=x)
    dout = randn(b, sq, hq, d, dtype=dt)
    alibi = make_alibi(opt["alibi"], b, hq) if "alibi" in opt else None
    return q, k, v, dout, alibi


@pytest.mark.parametrize("case", DENSE, ids=[dense_id(c) for c in DENSE])
def test_flash_attn_func_backward(case):
    dt, opt = case[6], case[7]
    q, k, v, dout, alibi = dense_inputs(case, seed=11)
    grads, out = kernel_grads(lambda *t: flashcute.flash_attn_func(*t, **kernel_options(opt, alibi)), (q, k, v), dout,
                              with_out=True)
    repro = f"REPRO: backward {dense_id(case)} seed=11"
    gold, lp = oracle_grads((q, k, v), dout, out=out, repro=repro, **ref_options(opt, alibi))
    check_grads(("dq", "dk", "dv"), grads, gold, lp, dt, repro)
    if case[1] > case[2] and opt.get("causal"):  # rows that see no key get exactly zero gradient
        assert torch.count_nonzero(grads[0][:, :case[1] - case[2]]) == 0, "dq of rows that see no key is not 0"


def test_qkvpacked_and_kvpacked_backward():
    torch.manual_seed(12)
    b, s, h, d = 2, 192, 4, 128
    qkv, dout = randn(b, s, 3, h, d), randn(b, s, h, d)
    q, k, v = (t.contiguous() for t in qkv.unbind(2))

    repro = "REPRO: qkvpacked backward seed=12"
    (dqkv,), out = kernel_grads(lambda t: flashcute.flash_attn_qkvpacked_func(t, causal=True), (qkv,), dout,
                                with_out=True)
    gold, lp = oracle_grads((q, k, v), dout, out=out, repro=repro, causal=True)
    check_grads(("dq", "dk", "dv"), dqkv.unbind(2), gold, lp, BF16, repro)

    repro = "REPRO: kvpacked backward seed=12"
    (dq, dkv), out = kernel_grads(lambda a, c: flashcute.flash_attn_kvpacked_func(a, c, causal=True),
                                  (q, qkv[:, :, 1:].contiguous()), dout, with_out=True)
    gold, lp = oracle_grads((q, k, v), dout, out=out, repro=repro, causal=True)
    check_grads(("dq", "dk", "dv"), (dq, *dkv.unbind(2)), gold, lp, BF16, repro)


# ---- varlen ----------------------------------------------------------------------------------------------
LENS_Q = [37, 0, 128, 1, 203, 64, 5]  # a zero-length sequence; the last 5 queries see no key
LENS_K = [37, 5, 100, 17, 203, 64, 0]
VARLEN = [
    {"causal": False},
    {"causal": True},
    {"window_size": (40, 8), "softcap": 30.0},
    {"alibi": "batch_heads", "causal": True},
    {"causal": True, "deterministic": True},
]


@pytest.mark.parametrize("opt", VARLEN, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
def test_flash_attn_varlen_func_backward(opt):
    torch.manual_seed(13)
    hq, hk, d = 8, 2, 128
    q, k, v = randn(sum(LENS_Q), hq, d), randn(sum(LENS_K), hk, d), randn(sum(LENS_K), hk, d)
    dout = randn(sum(LENS_Q), hq, d)
    alibi = make_alibi(opt["alibi"], len(LENS_Q), hq) if "alibi" in opt else None
    cu_q, cu_k = cu_seqlens(LENS_Q), cu_seqlens(LENS_K)
    max_q, max_k = max(LENS_Q) + 7, max(LENS_K)  # a larger max_seqlen gives the same answer
    grads, out = kernel_grads(lambda *t: flashcute.flash_attn_varlen_func(*t, cu_q, cu_k, max_q, max_k,
                                                                          **kernel_options(opt, alibi)),
                              (q, k, v), dout, with_out=True)
    repro = f"REPRO: varlen backward {opt} seed=13"
    gold, lp = oracle_grads((q, k, v), dout, out=out, lens=(LENS_Q, LENS_K), repro=repro, **ref_options(opt, alibi))
    check_grads(("dq", "dk", "dv"), grads, gold, lp, BF16, repro)
    last = sum(LENS_Q) - LENS_Q[-1]
    assert torch.count_nonzero(grads[0][last:]) == 0, "dq of the queries of a sequence with no key is not 0"


def test_varlen_packed_variants_backward():
    torch.manual_seed(14)
    h, d = 4, 128
    lens = [37, 0, 128, 1, 90]
    total = sum(lens)
    cu = cu_seqlens(lens)
    qkv, dout = randn(total, 3, h, d), randn(total, h, d)
    q, k, v = (t.contiguous() for t in qkv.unbind(1))

    repro = "REPRO: varlen qkvpacked backward seed=14"
    (dqkv,), out = kernel_grads(lambda t: flashcute.flash_attn_varlen_qkvpacked_func(t, cu, max(lens), causal=True),
                                (qkv,), dout, with_out=True)
    gold, lp = oracle_grads((q, k, v), dout, out=out, lens=(lens, lens), repro=repro, causal=True)
    check_grads(("dq", "dk", "dv"), dqkv.unbind(1), gold, lp, BF16, repro)

    repro = "REPRO: varlen kvpacked backward seed=14"
    (dq, dkv), out = kernel_grads(lambda a, c: flashcute.flash_attn_varlen_kvpacked_func(a, c, cu, cu, max(lens),
                                                                                         max(lens), causal=True),
                                  (q, qkv[:, 1:].contiguous()), dout, with_out=True)
    gold, lp = oracle_grads((q, k, v), dout, out=out, lens=(lens, lens), repro=repro, causal=True)
    check_grads(("dq", "dk", "dv"), (dq, *dkv.unbind(1)), gold, lp, BF16, repro)


# ---- determinism ------------------------------------------------------------------------------------------
def test_deterministic_backward_is_bitwise_repeatable():
    torch.manual_seed(15)
    b, s, hq, hk, d = 16, 512, 8, 2, 128  # GQA: each dk/dv row gathers 4 query heads and many query blocks
    q, k, v, dout = randn(b, s, hq, d), randn(b, s, hk, d), randn(b, s, hk, d), randn(b, s, hq, d)

    def grads():
        return kernel_grads(lambda *t: flashcute.flash_attn_func(*t, causal=True, deterministic=True), (q, k, v),
                            dout)

    first = grads()
    for i in range(10):
        again = grads()
        for name, a, c in zip(("dq", "dk", "dv"), first, again):
            assert torch.equal(a, c), f"{name} differs on repeat {i + 1} with deterministic=True"


def test_deterministic_varlen_backward_is_bitwise_repeatable():
    torch.manual_seed(16)
    lens = [300, 0, 511, 64, 1, 257] * 4
    h, d = 8, 128
    cu, total = cu_seqlens(lens), sum(lens)
    q, k, v, dout = (randn(total, h, d) for _ in range(4))

    def grads():
        return kernel_grads(lambda *t: flashcute.flash_attn_varlen_func(*t, cu, cu, max(lens), max(lens),
                                                                        deterministic=True), (q, k, v), dout)

    first = grads()
    for i in range(10):
        for name, a, c in zip(("dq", "dk", "dv"), first, grads()):
            assert torch.equal(a, c), f"{name} differs on repeat {i + 1} with deterministic=True (varlen)"


# ---- streams, devices, compile, opcheck -------------------------------------------------------------------
# Bitwise comparisons below use deterministic=True: the default backward may accumulate in any order.
def causal_det(*t):
    return flashcute.flash_attn_func(*t, causal=True, deterministic=True)


def test_backward_runs_on_the_current_stream():
    """Forward and backward on a non-default stream, with dout written on that stream after a long
    sleep: a kernel launched on another stream would read the stale (zero) dout."""
    if not hasattr(torch.cuda, "_sleep"):
        pytest.skip("torch.cuda._sleep is not available")
    torch.manual_seed(17)
    q, k, v, dout = (randn(2, 256, 4, 128) for _ in range(4))
    expected = kernel_grads(causal_det, (q, k, v), dout)
    xs = leaves(q, k, v)
    dout_late = torch.zeros_like(dout)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        out = causal_det(*xs)
        torch.cuda._sleep(50_000_000)
        dout_late.copy_(dout)
        out.backward(dout_late)
    torch.cuda.current_stream().wait_stream(side)
    for name, a, c in zip(("dq", "dk", "dv"), expected, (x.grad for x in xs)):
        assert torch.equal(a, c), f"{name} on a side stream differs from the default stream's"


def test_backward_on_a_non_zero_device_index():
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two CUDA devices (this machine has one)")
    torch.manual_seed(18)
    q, k, v, dout = (randn(1, 128, 4, 128) for _ in range(4))
    expected = kernel_grads(causal_det, (q, k, v), dout)
    dev = torch.device("cuda", 1)
    with torch.cuda.device(0):
        got = kernel_grads(causal_det, [t.to(dev) for t in (q, k, v)], dout.to(dev))
    for name, a, c in zip(("dq", "dk", "dv"), expected, got):
        assert c.device == dev and torch.equal(a, c.cpu().to(a.device)), f"{name} on cuda:1 differs from cuda:0's"


def test_torch_compile_backward():
    torch.manual_seed(19)
    q, k, v, dout = randn(2, 128, 8, 128), randn(2, 128, 2, 128), randn(2, 128, 2, 128), randn(2, 128, 8, 128)
    expected = kernel_grads(causal_det, (q, k, v), dout)
    compiled = torch.compile(lambda *t: causal_det(*t) * 2, fullgraph=True)
    got = kernel_grads(compiled, (q, k, v), dout / 2)  # dout/2 is exact: the same gradient as `expected`
    for name, a, c in zip(("dq", "dk", "dv"), expected, got):
        assert torch.equal(a, c), f"{name} under torch.compile differs from eager"


def test_opcheck_backward():
    torch.manual_seed(20)
    q, k, v, dout = (randn(2, 64, 4, 128) for _ in range(4))
    out, lse, _ = run_or_skip(flashcute.flash_attn_func, q, k, v, causal=True, return_attn_probs=True)
    run_or_skip(torch.ops.flashcute.bwd, dout, q, k, v, out, lse, None, True, -1, -1, 0.0, None, True, "auto")
    torch.library.opcheck(torch.ops.flashcute.bwd.default,
                          (dout, q, k, v, out, lse, None, True, -1, -1, 0.0, None, True, "auto"),
                          test_utils=("test_schema", "test_faketensor", "test_aot_dispatch_dynamic"))
    # the forward with inputs that require grad: autograd registration and the traced backward
    xs = leaves(q, k, v)
    torch.library.opcheck(torch.ops.flashcute.fwd.default, (*xs, None, True, -1, -1, 0.0, None, True, "auto"),
                          test_utils=("test_schema", "test_autograd_registration", "test_faketensor",
                                      "test_aot_dispatch_dynamic"))
