"""The Python package on a machine without a GPU (CI): it imports (without torch), and bad input
raises the right exception with the C++ validation message verbatim.

Validation runs before any CUDA call, so no GPU is needed to reach it. NumPy arrays are CPU
arrays, which validation rejects first ("tensor is on cpu"); to reach the other rules the tests
hand the extension small DLPack producers that *claim* to live on a CUDA device (FakeCudaArray).
Their data pointers are never dereferenced: every call here fails validation, and each bad-input
case is first checked through *_workspace_size (which never touches a GPU) before the launching
entry point is called with the same arguments.

Needs the extension (CMake -DFLASHCUTE_BUILD_PYTHON=ON with <build>/python on PYTHONPATH, as
scripts/test does, or `pip install .`); the torch tests also need torch. Both skip with the reason.
"""

import ctypes
import os
import re
import subprocess
import sys

import pytest

import flashcute
from flashcute import ops

def _case_id(x):
    if isinstance(x, type):
        return x.__name__
    if isinstance(x, re.Pattern):
        x = x.pattern
    return re.sub(r"[^A-Za-z0-9_=]+", "_", x).strip("_")[:48] if isinstance(x, str) else ""


needs_ext = pytest.mark.skipif(
    not flashcute.extension_available(),
    reason="flashcute._C is not built/importable "
    f"({flashcute._ext.IMPORT_ERROR}); configure with -DFLASHCUTE_BUILD_PYTHON=ON and put <build>/python "
    "on PYTHONPATH (scripts/test does), or pip install .",
)


# ---- a DLPack producer that claims a CUDA device ----------------------------------------------------
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_CAPSULE_NAME = b"dltensor"  # must outlive every capsule: a module constant

# DLPack dtype codes: 0 int, 1 uint, 2 float, 4 bfloat.
_DTYPES = {
    "float16": (2, 16), "bfloat16": (4, 16), "float32": (2, 32), "float64": (2, 64),
    "int32": (0, 32), "int64": (0, 64), "int8": (0, 8), "uint8": (1, 8),
}
_KDLCUDA = 2
_next_address = [0x7F0000000000]


class FakeCudaArray:
    """Shape, strides (elements, default row-major), dtype and a device, but no memory. Only ever
    handed to calls that fail validation."""

    def __init__(self, shape, dtype="float16", strides=None, device_index=0, device_type=_KDLCUDA):
        self.shape = tuple(shape)
        if strides is None:
            strides, acc = [], 1
            for n in reversed(self.shape):
                strides.insert(0, acc)
                acc *= max(n, 1)
        self.strides = tuple(strides)
        self.dtype = dtype
        self.device = (device_type, device_index)
        self.address = _next_address[0]
        _next_address[0] += 1 << 32
        self._keep = []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        ndim = len(self.shape)
        shape = (ctypes.c_int64 * max(ndim, 1))(*self.shape)
        strides = (ctypes.c_int64 * max(ndim, 1))(*self.strides)
        code, bits = _DTYPES[self.dtype]
        mt = _DLManagedTensor()
        mt.dl_tensor = _DLTensor(self.address, _DLDevice(*self.device), ndim, _DLDataType(code, bits, 1),
                                 ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64)),
                                 ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64)), 0)
        mt.manager_ctx = None
        mt.deleter = None
        self._keep.append((mt, shape, strides))  # the consumer reads them while it holds self
        return _PyCapsule_New(ctypes.addressof(mt), _CAPSULE_NAME, None)


def fake(*shape, dtype="float16", **kw):
    return FakeCudaArray(shape, dtype=dtype, **kw)


def dense(b=2, sq=16, sk=16, hq=4, hk=4, d=64, dv=None, dtype="float16", **over):
    """Valid dense forward arguments (fakes), with overrides."""
    dv = d if dv is None else dv
    a = dict(q=fake(b, sq, hq, d, dtype=dtype), k=fake(b, sk, hk, d, dtype=dtype), v=fake(b, sk, hk, dv, dtype=dtype),
             out=fake(b, sq, hq, dv, dtype=dtype), lse=fake(b, hq, sq, dtype="float32"))
    a.update(over)
    return a


def varlen(total_q=24, total_k=24, batch=2, hq=4, hk=4, d=64, dtype="float16", **over):
    a = dict(q=fake(total_q, hq, d, dtype=dtype), k=fake(total_k, hk, d, dtype=dtype), v=fake(total_k, hk, d, dtype=dtype),
             out=fake(total_q, hq, d, dtype=dtype), cu_seqlens_q=fake(batch + 1, dtype="int32"),
             cu_seqlens_k=fake(batch + 1, dtype="int32"), max_seqlen_q=16, max_seqlen_k=16,
             lse=fake(hq, total_q, dtype="float32"))
    a.update(over)
    return a


def expect(exc, message, size_fn, call_fn, args, **options):
    """Both the sizing call (no GPU) and the launching call raise `exc` with exactly `message`
    (a compiled regex for partial matches). The launching call runs only after the sizing call failed."""
    pattern = message if isinstance(message, re.Pattern) else "^" + re.escape(message) + "$"
    with pytest.raises(exc, match=pattern):
        size_fn(**args, **options)
    with pytest.raises(exc, match=pattern):
        call_fn(**args, **options)


def expect_fwd(exc, message, args, **options):
    expect(exc, message, ops.fwd_workspace_size, ops.fwd, args, **options)


def expect_varlen_fwd(exc, message, args, **options):
    expect(exc, message, ops.varlen_fwd_workspace_size, ops.varlen_fwd, args, **options)


# ---- import and metadata -----------------------------------------------------------------------------
def run_fresh_python(code):
    """Runs `code` in a new interpreter with this one's import path and no visible GPU."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def test_import_needs_neither_torch_nor_gpu():
    code = (
        "import sys, flashcute; "
        "assert 'torch' not in sys.modules, 'import flashcute imported torch'; "
        "print(flashcute.__version__, flashcute.extension_available())"
    )
    res = run_fresh_python(code)
    assert res.returncode == 0, res.stderr


def test_integrations_import_neither_torch_nor_transformers():
    code = (
        "import sys, flashcute, flashcute.integrations as i; "
        "assert callable(i.register_transformers); "
        "assert 'torch' not in sys.modules, 'flashcute.integrations imported torch'; "
        "assert 'transformers' not in sys.modules, 'flashcute.integrations imported transformers'"
    )
    res = run_fresh_python(code)
    assert res.returncode == 0, res.stderr


@needs_ext
def test_version_and_build_config():
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", flashcute.__version__)
    assert flashcute.__version__ == ops.version()
    assert "archs=" in flashcute.build_config() and "dtypes=" in flashcute.build_config()


def test_stream_handle():
    class TorchLike:
        cuda_stream = 1234

    class CupyLike:
        ptr = 5678

    class Protocol:
        def __cuda_stream__(self):
            return (0, 42)

    assert ops.stream_handle(None) == 0
    assert ops.stream_handle(7) == 7
    assert ops.stream_handle(TorchLike()) == 1234
    assert ops.stream_handle(CupyLike()) == 5678
    assert ops.stream_handle(Protocol()) == 42
    with pytest.raises(TypeError, match="stream: expected None"):
        ops.stream_handle("default")


# ---- host arrays -------------------------------------------------------------------------------------
@needs_ext
def test_numpy_cpu_arrays_are_rejected():
    np = pytest.importorskip("numpy")
    q = np.zeros((2, 16, 4, 64), np.float16)
    out = np.zeros_like(q)
    expect_fwd(ValueError, "q: tensor is on cpu; expected a CUDA device tensor", dict(q=q, k=q, v=q, out=out))
    # rank is checked before the device
    expect_fwd(ValueError, "q: has 3 dims (16, 4, 64); expected 4 dims (batch, seqlen_q, heads_q, head_dim)",
               dict(q=q[0], k=q, v=q, out=out))


@needs_ext
def test_not_a_tensor_is_a_type_error():
    with pytest.raises(TypeError):
        ops.fwd([1, 2], [1, 2], [1, 2], [1, 2])


# ---- dense forward: one rule per case ------------------------------------------------------------------
@needs_ext
@pytest.mark.parametrize(
    "exc, message, args, options",
    [
        (TypeError, "q: dtype float32 is not supported; expected float16 or bfloat16", dense(dtype="float32"), {}),
        (TypeError, "q: dtype other is not supported; expected float16 or bfloat16", dense(dtype="int8"), {}),
        (TypeError, "k: dtype bfloat16 does not match q's dtype float16", dense(k=fake(2, 16, 4, 64, dtype="bfloat16")), {}),
        (TypeError, "lse: dtype float16 must be float32", dense(lse=fake(2, 4, 16)), {}),
        (TypeError, "alibi_slopes: dtype float16 must be float32", dense(), {"alibi_slopes": fake(4)}),
        (ValueError, "q: has 3 dims (16, 4, 64); expected 4 dims (batch, seqlen_q, heads_q, head_dim)",
         dense(q=fake(16, 4, 64)), {}),
        (ValueError, re.compile(r"^q: has 5 dims \(1, 2, 16, 4, 64\)"), dense(q=fake(1, 2, 16, 4, 64)), {}),
        (ValueError, "k: batch=3 does not match q's batch=2", dense(k=fake(3, 16, 4, 64)), {}),
        (ValueError, "v: seqlen_k=8 does not match k's seqlen_k=16", dense(v=fake(2, 8, 4, 64)), {}),
        (ValueError, "k: head_dim=128 does not match q's head_dim=64", dense(k=fake(2, 16, 4, 128)), {}),
        (ValueError, "k: heads_kv=3 does not divide heads_q=8", dense(hq=8, hk=3), {}),
        (ValueError, "out: shape (2, 16, 4, 32) does not match the expected (2, 16, 4, 64)",
         dense(out=fake(2, 16, 4, 32)), {}),
        (ValueError, "lse: shape (2, 16, 4) does not match the expected (2, 4, 16)",
         dense(lse=fake(2, 16, 4, dtype="float32")), {}),
        # d = 59: contiguous, and in rows padded to 64 elements; the head-dim rule names the cause
        (ValueError, "q: head_dim=59 must be a multiple of 8", dense(d=59), {}),
        (ValueError, "q: head_dim=59 must be a multiple of 8",
         {n: fake(*t.shape[:-1], 59, dtype=t.dtype, strides=t.strides) if n != "lse" else t
          for n, t in dense(d=64).items()}, {}),
        # rows that do not start on 16-byte boundaries (d = 64 in rows of 68 elements)
        (ValueError, "q: stride[2]=68 is not a multiple of 8 elements; rows must start on 16-byte boundaries",
         dense(q=fake(2, 16, 4, 64, strides=(4352, 272, 68, 1))), {}),
        (ValueError, "q: head_dim=264 exceeds the maximum of 256", dense(d=264), {}),
        (ValueError, "q: last dimension has stride 2; it must be contiguous (stride 1)",
         dense(q=fake(2, 16, 4, 64, strides=(8192, 512, 128, 2))), {}),
        (ValueError, "q: tensor is on other; expected a CUDA device tensor",
         dense(q=fake(2, 16, 4, 64, device_type=10)), {}),
        (ValueError, "k: is on cuda:1 but q is on cuda:0", dense(k=fake(2, 16, 4, 64, device_index=1)), {}),
        (ValueError, "alibi_slopes: shape (5) must be (heads_q=4) or (batch=2, heads_q=4)", dense(),
         {"alibi_slopes": fake(5, dtype="float32")}),
        (ValueError, "window_right=4 conflicts with causal=true (causal means window_right=0)", dense(),
         {"causal": True, "window_size": (-1, 4)}),
        (ValueError, "window_left=-2 must be >= -1 (-1 = unbounded)", dense(), {"window_size": (-2, -1)}),
        (ValueError, "softcap=-1 must be finite and >= 0 (0 = off)", dense(), {"softcap": -1.0}),
        (ValueError, "softmax_scale=inf must be finite", dense(), {"softmax_scale": float("inf")}),
        (ValueError, "softmax_scale=0 must be > 0", dense(), {"softmax_scale": 0.0}),
        (ValueError, "softmax_scale=-0.5 must be > 0", dense(), {"softmax_scale": -0.5}),
        (ValueError, "backend='sm70' is not a known backend (auto, sm80, sm90)", dense(), {"backend": "sm70"}),
        (NotImplementedError, "dropout_p=0.1: dropout is not built yet; only dropout_p=0 is supported", dense(),
         {"dropout_p": 0.1}),
    ],
    ids=_case_id,
)
def test_dense_forward_bad_input(exc, message, args, options):
    expect_fwd(exc, message, args, **options)


@needs_ext
def test_not_supported_is_a_runtime_error():
    # NotImplementedError subclasses RuntimeError: code written for flash_attn's RuntimeError still catches it.
    assert issubclass(NotImplementedError, RuntimeError)
    with pytest.raises(RuntimeError, match="dropout is not built yet"):
        ops.fwd_workspace_size(**dense(), dropout_p=0.5)


@needs_ext
def test_forward_workspace_is_optional_but_whole_when_given():
    # 16 bytes: the SM90 persistent kernel's tile counter. Without a workspace the forward still runs.
    assert ops.fwd_workspace_size(**dense()) == 16
    assert ops.fwd_workspace_size(**dense(hq=8, hk=2, d=128, dtype="bfloat16"), causal=True, softcap=30.0) == 16
    args = dense()
    del args["lse"]  # lse is optional
    assert ops.fwd_workspace_size(**args) == 16
    with pytest.raises(ValueError, match=re.escape("workspace: 8 bytes given, 16 needed (see fwd_workspace_size)")):
        ops.fwd(**dense(), workspace=fake(8, dtype="uint8"))


# ---- varlen forward ------------------------------------------------------------------------------------
@needs_ext
@pytest.mark.parametrize(
    "exc, message, args",
    [
        (TypeError, "cu_seqlens_q: dtype int64 must be int32", varlen(cu_seqlens_q=fake(3, dtype="int64"))),
        (ValueError, "cu_seqlens_k: length 4 does not match cu_seqlens_q's length 3 (both are batch + 1)",
         varlen(cu_seqlens_k=fake(4, dtype="int32"))),
        (ValueError, "q: has 4 dims (2, 12, 4, 64); expected 3 dims (total_q, heads_q, head_dim)",
         varlen(q=fake(2, 12, 4, 64))),
        (ValueError, "v: total_k=20 does not match k's total_k=24", varlen(v=fake(20, 4, 64))),
        (ValueError, "lse: shape (24, 4) does not match the expected (4, 24)", varlen(lse=fake(24, 4, dtype="float32"))),
        (ValueError, "max_seqlen_q=-1 must be >= 0", varlen(max_seqlen_q=-1)),
    ],
    ids=_case_id,
)
def test_varlen_forward_bad_input(exc, message, args):
    expect_varlen_fwd(exc, message, args)


@needs_ext
def test_varlen_host_offsets_are_checked():
    np = pytest.importorskip("numpy")

    def call(**kw):  # softcap=-1 is checked after the offsets: a safety net, so that nothing launches
        ops.varlen_fwd(**kw, softcap=-1.0)

    good = np.array([0, 10, 24], np.int32)
    with pytest.raises(ValueError, match=re.escape("cu_seqlens_q: must be non-decreasing, but cu_seqlens_q[2]=3 < cu_seqlens_q[1]=10")):
        call(**varlen(), cu_seqlens_q_host=np.array([0, 10, 3], np.int32), cu_seqlens_k_host=good)
    with pytest.raises(ValueError, match=re.escape("cu_seqlens_q: cu_seqlens_q[0]=1 must be 0")):
        call(**varlen(), cu_seqlens_q_host=np.array([1, 10, 24], np.int32))
    with pytest.raises(ValueError, match=re.escape("max_seqlen_q=16 is smaller than sequence 1's length 20")):
        call(**varlen(), cu_seqlens_q_host=np.array([0, 4, 24], np.int32))
    with pytest.raises(ValueError, match=re.escape("cu_seqlens_k: cu_seqlens_k[2]=30 exceeds total_k=24")):
        call(**varlen(max_seqlen_k=32), cu_seqlens_k_host=np.array([0, 10, 30], np.int32))
    # the binding's own checks on the host copy (the C++ API reads batch + 1 values through a pointer)
    with pytest.raises(ValueError, match=re.escape("cu_seqlens_q_host: length 2 does not match the device array's length 3")):
        call(**varlen(), cu_seqlens_q_host=np.array([0, 10], np.int32))
    with pytest.raises(TypeError, match=re.escape("cu_seqlens_q_host: dtype int64 must be int32")):
        call(**varlen(), cu_seqlens_q_host=good.astype(np.int64))
    with pytest.raises(ValueError, match=re.escape("cu_seqlens_q_host: tensor is on cuda; expected a host (CPU) tensor")):
        call(**varlen(), cu_seqlens_q_host=fake(3, dtype="int32"))


# ---- backward: arguments and workspace --------------------------------------------------------------------
def bwd_args(b=2, sq=16, sk=16, hq=4, hk=4, d=64, dtype="float16", **over):
    a = dict(dout=fake(b, sq, hq, d, dtype=dtype), q=fake(b, sq, hq, d, dtype=dtype), k=fake(b, sk, hk, d, dtype=dtype),
             v=fake(b, sk, hk, d, dtype=dtype), out=fake(b, sq, hq, d, dtype=dtype), lse=fake(b, hq, sq, dtype="float32"),
             dq=fake(b, sq, hq, d, dtype=dtype), dk=fake(b, sk, hk, d, dtype=dtype), dv=fake(b, sk, hk, d, dtype=dtype))
    a.update(over)
    return a


@needs_ext
def test_backward_bad_input():
    expect(ValueError, "dq: shape (2, 16, 4, 32) does not match the expected (2, 16, 4, 64)", ops.bwd_workspace_size,
           ops.bwd, bwd_args(dq=fake(2, 16, 4, 32)))
    expect(TypeError, "dk: dtype bfloat16 does not match q's dtype float16", ops.bwd_workspace_size, ops.bwd,
           bwd_args(dk=fake(2, 16, 4, 64, dtype="bfloat16")))
    expect(ValueError, "lse: tensor is required but was not given", ops.bwd_workspace_size, ops.bwd,
           bwd_args(lse=None))


@needs_ext
def test_backward_workspace_rules():
    args = bwd_args()
    needed = ops.bwd_workspace_size(**args)
    assert needed > 0
    with pytest.raises(ValueError, match=re.escape(f"workspace: 0 bytes given, {needed} needed (see bwd_workspace_size)")):
        ops.bwd(**args)
    with pytest.raises(ValueError, match=re.escape(f"workspace: {needed - 256} bytes given, {needed} needed")):
        ops.bwd(**args, workspace=fake(needed - 256, dtype="uint8"))

    class Asked(Exception):
        pass

    asked = []

    def alloc(nbytes):  # a callable workspace is asked for exactly the bytes the call needs
        asked.append(nbytes)
        raise Asked

    with pytest.raises(Asked):
        ops.bwd(**args, workspace=alloc)
    assert asked == [needed]
    with pytest.raises(ValueError, match=re.escape("workspace: is on cuda:1 but q is on cuda:0")):
        ops.bwd(**args, workspace=fake(needed, dtype="uint8", device_index=1))
    with pytest.raises(TypeError, match="workspace: expected a writable DLPack array"):
        ops.bwd(**args, workspace=lambda n: "not an array")
    np = pytest.importorskip("numpy")
    with pytest.raises(ValueError, match=re.escape("workspace: tensor is on cpu; expected a CUDA device tensor")):
        ops.bwd(**args, workspace=lambda n: np.empty(n, np.uint8))


@needs_ext
def test_varlen_backward_workspace_size():
    v = varlen()
    args = dict(dout=v["out"], q=v["q"], k=v["k"], v=v["v"], out=v["out"], lse=v["lse"], dq=fake(24, 4, 64),
                dk=fake(24, 4, 64), dv=fake(24, 4, 64), cu_seqlens_q=v["cu_seqlens_q"], cu_seqlens_k=v["cu_seqlens_k"],
                max_seqlen_q=16, max_seqlen_k=16)
    needed = ops.varlen_bwd_workspace_size(**args)
    assert needed > 0
    with pytest.raises(ValueError, match=re.escape(f"workspace: 0 bytes given, {needed} needed (see bwd_workspace_size)")):
        ops.varlen_bwd(**args)


# ---- the torch layer (CPU and meta tensors) ---------------------------------------------------------------
@pytest.fixture
def torch():
    return pytest.importorskip("torch", reason="torch is not installed: the flash_attn_* layer is not tested here")


@needs_ext
def test_torch_cpu_tensors_are_rejected(torch):
    from flashcute import flash_attn_func, flash_attn_varlen_func

    q = torch.randn(2, 16, 4, 64, dtype=torch.float16)
    with pytest.raises(ValueError, match=re.escape("q: tensor is on cpu; expected a CUDA device tensor")):
        flash_attn_func(q, q, q)
    with pytest.raises(ValueError, match=re.escape("q: has 3 dims (16, 4, 64); expected 4 dims")):
        flash_attn_func(q[0], q, q)
    cu = torch.tensor([0, 16, 32], dtype=torch.int32)
    qv = q.reshape(32, 4, 64)
    with pytest.raises(ValueError, match=re.escape("q: tensor is on cpu; expected a CUDA device tensor")):
        flash_attn_varlen_func(qv, qv, qv, cu, cu, 16, 16)


def test_torch_unsupported_features_raise_not_implemented(torch):
    from flashcute import flash_attn_func, flash_attn_varlen_func

    q = torch.randn(2, 16, 4, 64, dtype=torch.float16)
    with pytest.raises(NotImplementedError, match=r"dropout_p=0\.1: attention dropout is not implemented"):
        flash_attn_func(q, q, q, dropout_p=0.1)
    cu = torch.tensor([0, 16, 32], dtype=torch.int32)
    qv = q.reshape(32, 4, 64)
    with pytest.raises(NotImplementedError, match="block_table: paged KV"):
        flash_attn_varlen_func(qv, qv, qv, cu, cu, 16, 16, block_table=cu)
    with pytest.raises(ValueError, match="backend='x' is not a known backend"):
        with flashcute.use_backend("x"):
            pass


def test_torch_meta_shapes_and_autograd_wiring(torch):
    """The fake (meta) implementations give flash_attn's output shapes, and the autograd formula
    reaches the backward op: the same paths torch.compile traces, without a GPU."""
    import flashcute as fc

    meta = dict(device="meta", dtype=torch.bfloat16)
    b, sq, sk, hq, hk, d = 2, 48, 64, 8, 2, 128
    q = torch.empty(b, sq, hq, d, **meta, requires_grad=True)
    k = torch.empty(b, sk, hk, d, **meta, requires_grad=True)
    v = torch.empty(b, sk, hk, d, **meta, requires_grad=True)
    out = fc.flash_attn_func(q, k, v, causal=True)
    assert out.shape == (b, sq, hq, d) and out.dtype == torch.bfloat16 and out.requires_grad
    out2, lse, probs = fc.flash_attn_func(q, k, v, return_attn_probs=True)
    assert lse.shape == (b, hq, sq) and lse.dtype == torch.float32 and probs is None and not lse.requires_grad
    out.sum().backward()
    assert q.grad.shape == q.shape and k.grad.shape == k.shape and v.grad.shape == v.shape

    qkv = torch.empty(b, sq, 3, hq, d, **meta, requires_grad=True)
    assert fc.flash_attn_qkvpacked_func(qkv).shape == (b, sq, hq, d)
    kv = torch.empty(b, sk, 2, hk, d, **meta)
    assert fc.flash_attn_kvpacked_func(q, kv).shape == (b, sq, hq, d)
    fc.flash_attn_qkvpacked_func(qkv).sum().backward()
    assert qkv.grad.shape == qkv.shape

    total_q, total_k = 40, 56
    cu_q = torch.empty(b + 1, device="meta", dtype=torch.int32)
    cu_k = torch.empty(b + 1, device="meta", dtype=torch.int32)
    qv = torch.empty(total_q, hq, d, **meta, requires_grad=True)
    kvv = torch.empty(total_k, hk, d, **meta, requires_grad=True)
    o, lse, _ = fc.flash_attn_varlen_func(qv, kvv, kvv, cu_q, cu_k, 32, 32, return_attn_probs=True)
    assert o.shape == (total_q, hq, d) and lse.shape == (hq, total_q)
    o.sum().backward()
    assert qv.grad.shape == qv.shape and kvv.grad.shape == kvv.shape
    qkvv = torch.empty(total_q, 3, hq, d, **meta)
    assert fc.flash_attn_varlen_qkvpacked_func(qkvv, cu_q, 32).shape == (total_q, hq, d)
    kvp = torch.empty(total_k, 2, hk, d, **meta)
    assert fc.flash_attn_varlen_kvpacked_func(qv, kvp, cu_q, cu_k, 32, 32).shape == (total_q, hq, d)


def test_torch_ops_are_registered(torch):
    import flashcute.flash_attn_interface  # noqa: F401

    for name in ("fwd", "varlen_fwd", "bwd", "varlen_bwd"):
        op = getattr(torch.ops.flashcute, name)
        assert "Tensor" in str(op.default._schema)


def test_torch_compile_fullgraph_traces_on_meta(torch):
    """torch.compile(fullgraph=True) traces flash_attn_func and its backward with no graph break
    (aot_eager on meta tensors: the fake implementations stand in for the kernels)."""
    import flashcute as fc

    q = torch.empty(2, 64, 8, 128, device="meta", dtype=torch.bfloat16, requires_grad=True)
    k = torch.empty(2, 64, 2, 128, device="meta", dtype=torch.bfloat16, requires_grad=True)

    def loss(q, k):
        return (fc.flash_attn_func(q, k, k, causal=True, window_size=(32, 0)) * 2).sum()

    torch.compile(loss, fullgraph=True, backend="aot_eager")(q, k).backward()
    assert q.grad.shape == q.shape and k.grad.shape == k.shape


# ---- DLPack ownership and the error paths (regression: a bad-input call segfaulted on the GPU) -----------
# test_fwd_gpu.py::test_bad_input_on_the_gpu died with SIGSEGV inside _C.fwd on its first call
# (float32 CUDA tensors -> TypeError expected): the first error raised by the extension in that process.
# The tests below drive the same path without a GPU: the same DLPack producers (torch's to_dlpack
# capsules, raw capsules, __dlpack__ objects), inputs that claim a CUDA device so that validation gets
# past the device check, hundreds of failing calls, and reference counts that must come back exactly
# (a leaked DLManagedTensor keeps them up, a double free drops them or crashes).
_PyCapsule_IsValid = ctypes.pythonapi.PyCapsule_IsValid
_PyCapsule_IsValid.restype = ctypes.c_int
_PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_PyCapsule_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = ctypes.c_void_p
_PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


def _claim_cuda(capsule):
    """Rewrites the device of an unconsumed DLPack capsule's tensor to cuda:0, in place (the producer's
    deleter does not read it). The data pointer stays a host pointer: only failing calls may see it."""
    if _PyCapsule_IsValid(capsule, b"dltensor"):
        mt = _DLManagedTensor.from_address(_PyCapsule_GetPointer(capsule, b"dltensor"))
    else:
        mt = _DLManagedTensorVersioned.from_address(_PyCapsule_GetPointer(capsule, b"dltensor_versioned"))
    mt.dl_tensor.device.device_type = _KDLCUDA
    mt.dl_tensor.device.device_id = 0
    return capsule


def _consumed(capsule):
    return bool(_PyCapsule_IsValid(capsule, b"used_dltensor") or _PyCapsule_IsValid(capsule, b"used_dltensor_versioned"))


@needs_ext
def test_raw_capsules_on_the_error_path_are_consumed_once():
    np = pytest.importorskip("numpy")
    q = np.zeros((2, 16, 4, 64), np.float16)
    out = np.zeros_like(q)
    base_q, base_out = sys.getrefcount(q), sys.getrefcount(out)
    for _ in range(500):
        caps = [q.__dlpack__() for _ in range(3)] + [out.__dlpack__()]
        with pytest.raises(ValueError, match=r"^q: tensor is on cpu; expected a CUDA device tensor$"):
            flashcute._C.fwd(*caps)
        assert all(_consumed(c) for c in caps)  # taken over by the extension, released by it once
        # a consumed capsule is refused, not imported (and freed) a second time
        with pytest.raises(TypeError, match="incompatible function arguments"):
            flashcute._C.fwd(*caps)
        # one capsule passed twice: the second import is refused, the first released once
        c = q.__dlpack__()
        with pytest.raises(TypeError, match="incompatible function arguments"):
            flashcute._C.fwd(c, c, c, out.__dlpack__())
    del caps, c
    assert (sys.getrefcount(q), sys.getrefcount(out)) == (base_q, base_out)


@needs_ext
def test_error_path_through_dunder_dlpack_releases_every_array():
    np = pytest.importorskip("numpy")
    arrays = [np.zeros((2, 16, 4, 64), np.float16) for _ in range(4)]
    base = [sys.getrefcount(a) for a in arrays]
    for _ in range(500):
        with pytest.raises(ValueError, match=r"^q: tensor is on cpu"):
            ops.fwd(*arrays)
        with pytest.raises(ValueError, match=r"^q: tensor is on cpu"):
            ops.fwd_workspace_size(*arrays)
    assert [sys.getrefcount(a) for a in arrays] == base


@needs_ext
def test_torch_capsules_on_the_error_path(torch):
    """The call that crashed, short of the GPU: _C.fwd with torch.utils.dlpack.to_dlpack capsules
    claiming cuda:0, a workspace callable and a stream, as _torch_ops.fwd makes it, failing in
    validation; every tensor's use count comes back to where it was."""
    from torch.utils.dlpack import to_dlpack

    if not hasattr(torch.Tensor, "_use_count"):
        pytest.skip("this torch has no Tensor._use_count")
    q = torch.randn(2, 64, 4, 128).to(torch.bfloat16)
    q32, q16, v64 = q.float(), q.half(), q[..., :64]
    out, out32 = torch.empty_like(q), torch.empty_like(q32)
    lse = torch.empty(2, 4, 64)
    tensors = (q, q32, q16, v64, out, out32, lse)
    base = [t._use_count() for t in tensors]
    asked = []
    cases = [
        (TypeError, r"^q: dtype float32 is not supported; expected float16 or bfloat16$", (q32, q32, q32, out32)),
        (TypeError, r"^k: dtype float16 does not match q's dtype bfloat16$", (q, q16, q, out)),
        (ValueError, r"^out: shape \(2, 64, 4, 128\) does not match the expected \(2, 64, 4, 64\)$", (q, q, v64, out)),
    ]
    for _ in range(300):
        for exc, pattern, (a, b, c, o) in cases:
            caps = [_claim_cuda(to_dlpack(t)) for t in (a, b, c, o, lse)]
            with pytest.raises(exc, match=pattern):
                flashcute._C.fwd(*caps, None, False, -1, -1, 0.0, None, 0, "auto", asked.append, 0.0)
            assert all(_consumed(x) for x in caps)
    del caps
    assert not asked  # the forward needs no workspace: the callable is never called
    assert [t._use_count() for t in tensors] == base


@needs_ext
def test_torch_flash_attn_func_error_path_like_the_gpu_test(torch, monkeypatch):
    """tests/python/test_fwd_gpu.py::test_bad_input_on_the_gpu on CPU tensors that the DLPack capsules
    declare to be on cuda:0: flash_attn_func -> torch.ops.flashcute.fwd -> _torch_ops.fwd -> _C.fwd,
    the same messages, many times over, and no tensor kept or freed once too often."""
    import flashcute._torch_ops as torch_ops

    real_to_dlpack = torch_ops.to_dlpack
    monkeypatch.setattr(torch_ops, "to_dlpack", lambda t: _claim_cuda(real_to_dlpack(t)))
    from flashcute import flash_attn_func

    q = torch.randn(2, 64, 4, 128).to(torch.bfloat16)
    x59, kv3 = torch.randn(2, 64, 4, 59).to(torch.bfloat16), torch.randn(2, 64, 3, 128).to(torch.bfloat16)
    base = [t._use_count() for t in (q, x59, kv3)] if hasattr(q, "_use_count") else None
    for _ in range(100):
        with pytest.raises(TypeError, match=r"^q: dtype float32 is not supported; expected float16 or bfloat16$"):
            flash_attn_func(q.float(), q.float(), q.float())
        with pytest.raises(TypeError, match=r"^k: dtype float16 does not match q's dtype bfloat16$"):
            flash_attn_func(q, q.half(), q)
        with pytest.raises(ValueError, match=r"^q: head_dim=59 must be a multiple of 8$"):
            flash_attn_func(x59, x59, x59)
        with pytest.raises(ValueError, match=r"^k: heads_kv=3 does not divide heads_q=4$"):
            flash_attn_func(q, kv3, kv3)
    if base is not None:
        assert [t._use_count() for t in (q, x59, kv3)] == base


def _run_python(code, **env):
    full_env = dict(os.environ, **env)
    full_env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return subprocess.run([sys.executable, "-X", "faulthandler", "-c", code], capture_output=True, text=True,
                          env=full_env, timeout=120)


@needs_ext
def test_trace_names_each_step():
    res = _run_python(
        "import numpy as np, flashcute\n"
        "q = np.zeros((2, 16, 4, 64), np.float16)\n"
        "try:\n    flashcute.ops.fwd(q, q, q, q)\nexcept ValueError as e:\n    print('raised', e)\n",
        FLASHCUTE_TRACE="1")
    if "No module named 'numpy'" in res.stderr:
        pytest.skip("numpy is not installed")
    assert res.returncode == 0, res.stderr
    assert "raised q: tensor is on cpu" in res.stdout
    assert "[flashcute._C] fwd: arguments converted" in res.stderr
    assert "[flashcute._C]   q: float16 on cpu:0, shape (2, 16, 4, 64)" in res.stderr
    assert "[flashcute._C] fwd: raising ValueError: q: tensor is on cpu" in res.stderr


@needs_ext
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the native backtrace is Linux-only")
def test_native_backtrace_on_a_fatal_signal():
    res = _run_python("import ctypes, flashcute\nctypes.string_at(0)\n", FLASHCUTE_NATIVE_BACKTRACE="1")
    assert res.returncode != 0
    assert "flashcute._C: fatal signal; native stack" in res.stderr
    assert "Segmentation fault" in res.stderr  # faulthandler still runs after it (the Python stack)


@needs_ext
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF dynamic symbols")
def test_extension_exports_only_its_init_function():
    import shutil

    if shutil.which("nm") is None:
        pytest.skip("nm is not installed")
    res = subprocess.run(["nm", "-D", "--defined-only", flashcute._C.__file__], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    names = sorted(line.split()[-1] for line in res.stdout.splitlines() if line.strip())
    assert names == ["PyInit__C"], names[:20]
