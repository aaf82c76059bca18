# pytest configuration for flashcute's Python tests. Tests that need a GPU use the `gpu` marker and
# skip with a visible reason where no CUDA device is present (the package arrives in a later issue).
import os
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
# torch_reference.py (the shared float64 oracle of the GPU tests) is imported by name.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

# A native crash in flashcute._C prints the native stack (then pytest's faulthandler the Python one):
# read when the extension is imported, which happens after this file. FLASHCUTE_TRACE=1 in the
# environment adds one stderr line per step of every extension call.
os.environ.setdefault("FLASHCUTE_NATIVE_BACKTRACE", "1")

# tools/ holds standalone scripts (run by hand, e.g. on a GPU), never tests.
collect_ignore = ["tools"]


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU; skipped with a reason where there is none")
