"""Loads the compiled extension flashcute._C once, keeping the reason when it cannot be loaded.

`import flashcute` works without the extension (and without torch or a GPU), so that tools and
tests can say *why* it is missing; every call that needs it raises ImportError with that reason.
"""

import importlib

try:
    _C = importlib.import_module(f"{__package__}._C")  # the nanobind module over the C++ API

    IMPORT_ERROR = None
except ImportError as exc:  # not built, or built for another Python
    _C = None
    IMPORT_ERROR = exc


def available():
    """True when the compiled extension flashcute._C is importable."""
    return _C is not None


def ext():
    """The compiled extension module, or ImportError saying how to build it."""
    if _C is None:
        raise ImportError(
            "flashcute's compiled extension flashcute._C is not importable "
            f"({IMPORT_ERROR}). Build it with `pip install .` (scikit-build-core) or configure CMake with "
            "-DFLASHCUTE_BUILD_PYTHON=ON and put <build>/python on PYTHONPATH."
        ) from IMPORT_ERROR
    return _C
