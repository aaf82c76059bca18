# pytest configuration for flashcute's Python tests. Tests that need a GPU use the `gpu` marker and
# skip with a visible reason where no CUDA device is present (the package arrives in a later issue).
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU; skipped with a reason where there is none")
