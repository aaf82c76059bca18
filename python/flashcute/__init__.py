"""flashcute: FlashAttention in CUDA C++ on CUTLASS/CuTe, and a drop-in for flash_attn.

    from flashcute import flash_attn_func            # torch: autograd, torch.compile
    out = flash_attn_func(q, k, v, causal=True)      # q, k, v: (batch, seqlen, heads, d) fp16/bf16

Layers:
  flashcute.flash_attn_interface  flash_attn's functions over torch.library custom ops (needs torch;
                                  imported on first use, so `import flashcute` never imports torch)
  flashcute.ops                   framework-neutral calls on DLPack tensors (torch, CuPy, JAX, ...)
                                  with caller-allocated outputs and an explicit CUDA stream
  flashcute._C                    the compiled binding of the public C++ API (nanobind)
"""

import pkgutil

# A build tree holds its own copy of this package next to the compiled module
# (<build>/python/flashcute); extending the path lets an in-tree checkout of python/flashcute that
# comes first on sys.path still find that module. A no-op for an installed wheel.
__path__ = pkgutil.extend_path(__path__, __name__)

from . import ops  # noqa: E402
from ._ext import available as extension_available  # noqa: E402
from ._ext import _C  # noqa: E402

__version__ = _C.version() if _C is not None else "0+unknown"

_TORCH_API = (
    "flash_attn_func",
    "flash_attn_qkvpacked_func",
    "flash_attn_kvpacked_func",
    "flash_attn_varlen_func",
    "flash_attn_varlen_qkvpacked_func",
    "flash_attn_varlen_kvpacked_func",
    "use_backend",
)

__all__ = ["__version__", "build_config", "extension_available", "ops", *_TORCH_API]


def build_config():
    """What the compiled library contains (architectures, dtypes, head-dim buckets, kernel count)."""
    return ops.build_config()


def __getattr__(name):
    # The torch API is imported on first use: importing flashcute must not import torch.
    if name in _TORCH_API:
        from . import flash_attn_interface

        return getattr(flash_attn_interface, name)
    raise AttributeError(f"module 'flashcute' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | set(_TORCH_API))
