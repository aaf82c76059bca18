"""The kernel manifest is well formed: every line parses, every family is declared before use and
its header exists, every kernel names a known arch/dtype/bucket, and no instantiation is listed
twice. CMake enforces the same at configure time; this catches it before a build."""
import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[2]
MANIFEST = REPO / "src" / "kernels.manifest"
BUCKETS = {0, 64, 96, 128, 192, 256}


def parse(text):
    families, kernels = {}, []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        f = line.split()
        if f[0] == "family":
            assert len(f) == 4, f"line {lineno}: family needs <name> <header> <template>"
            families[f[1]] = (f[2], f[3])
        elif f[0] == "kernel":
            assert len(f) in (5, 6), f"line {lineno}: kernel needs <family> <arch> <dtype> <head_dim> [variant]"
            fam, arch, dtype, hdim = f[1:5]
            variant = f[5] if len(f) == 6 else "kDefault"
            assert fam in families, f"line {lineno}: family {fam} not declared above"
            assert arch in ("sm80", "sm90"), f"line {lineno}: arch {arch}"
            assert dtype in ("fp16", "bf16"), f"line {lineno}: dtype {dtype}"
            assert int(hdim) in BUCKETS, f"line {lineno}: head_dim {hdim} is not a bucket"
            assert re.fullmatch(r"k[A-Z][A-Za-z0-9]*", variant), f"line {lineno}: variant {variant}"
            kernels.append((fam, arch, dtype, int(hdim), variant))
        else:
            raise AssertionError(f"line {lineno}: unknown kind {f[0]}")
    return families, kernels


def test_manifest_parses_and_headers_exist():
    families, kernels = parse(MANIFEST.read_text())
    assert families and kernels
    for name, (header, template) in families.items():
        assert (REPO / "src" / header).is_file(), f"family {name}: header src/{header} missing"
        assert template.startswith("flashcute::"), f"family {name}: template {template}"
    assert len(set(kernels)) == len(kernels), "an instantiation is listed twice"


def test_parser_rejects_bad_lines():
    import pytest

    with pytest.raises(AssertionError):
        parse("kernel undeclared sm80 fp16 0\n")
    with pytest.raises(AssertionError):
        parse("family f smoke/smoke_mma.cuh flashcute::X\nkernel f sm70 fp16 0\n")
    with pytest.raises(AssertionError):
        parse("family f smoke/smoke_mma.cuh flashcute::X\nkernel f sm80 fp16 72\n")
