#!/usr/bin/env python3
"""Which kernels two builds compiled differently: a per-function comparison of their SASS.

Before a device call that A/Bs a variant against a base, check that the variant changed the kernels
it was meant to change (and only those): a build switch that does not reach a row gives an A/A
(session 27 spent a call on one). After moving a measured change into its landed form, check that
the landed kernels are the measured ones.

Each input is a binary, an object or a cubin (dumped with `cuobjdump --dump-sass`) or a text file
that already holds such a dump. Functions are matched by (arch, mangled name) and compared
instruction by instruction (the encodings and the addresses are ignored; branch targets are
function-relative in cuobjdump's output, so code that only moved compares equal). Prints a
Markdown table: each function's status (identical, differs, only in one), its instruction count on
each side and, where it differs, the change in a few opcodes that matter here (HGMMA, MUFU.EX2,
FMNMX, local-memory spill traffic STL/LDL, BAR).

    python3 bench/sass_diff.py build/base/apps/flashcute build/variant/apps/flashcute [--match fwd_kernel]
    python3 bench/sass_diff.py A B --expect changed   # exit 1 if no matched function differs
    python3 bench/sass_diff.py A B --expect same      # exit 1 if any matched function differs
    python3 bench/sass_diff.py A B --renamed --expect same

--renamed pairs a function found in A only with one found in B only, of the same arch, whose
instructions are the same ("renamed": a kernel whose template arguments gained a field, such as a
new FwdTileConfig member, keeps its code under a new mangled name); the pair counts as identical.

cuobjdump comes from $CUOBJDUMP, then PATH, then $CUDA_HOME/bin, then .deps/cudatools; it needs
nvdisasm beside it, on PATH, named by $NVDISASM or in .deps/cudatools. scripts/setup installs both
there (pip wheels nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm) where the toolkit lacks them, as
on this project's CPU machine (nvcc and ptxas only).
"""

import argparse
import collections
import glob
import os
import re
import shutil
import subprocess
import sys

OPCODES = ("HGMMA", "MUFU.EX2", "FMNMX", "STL", "LDL", "BAR")
_FUNC = re.compile(r"^\s*Function : (\S+)")
_ARCH = re.compile(r"^\s*arch = (\S+)")
_INSN = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;")


def parse(text):
    """{(arch, function): [instruction text, ...]} from cuobjdump --dump-sass output."""
    funcs = {}
    arch, cur = "", None
    for line in text.splitlines():
        m = _ARCH.match(line)
        if m:
            arch, cur = m.group(1), None
            continue
        m = _FUNC.match(line)
        if m:
            cur = funcs.setdefault((arch, m.group(1)), [])
            continue
        if cur is not None:
            m = _INSN.search(line)
            if m:
                cur.append(" ".join(m.group(1).split()))
    return funcs


DEPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".deps", "cudatools")


def _deps_tool(name):
    found = sorted(glob.glob(os.path.join(DEPS, "nvidia", "*", "bin", name)))
    return found[-1] if found else None


def find_cuobjdump():
    for cand in (os.environ.get("CUOBJDUMP"), shutil.which("cuobjdump"),
                 os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "cuobjdump"),
                 _deps_tool("cuobjdump")):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


def load(path, cuobjdump):
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    if b"\0" not in head and b"Function : " in head:  # an earlier dump, as text
        with open(path, encoding="utf-8", errors="replace") as f:
            return parse(f.read())
    if cuobjdump is None:
        sys.exit("sass_diff: cuobjdump not found (set CUOBJDUMP; see this script's docstring)")
    env = dict(os.environ)
    nvdisasm = env.get("NVDISASM") or _deps_tool("nvdisasm")
    extra = [os.path.dirname(cuobjdump)] + ([os.path.dirname(nvdisasm)] if nvdisasm else [])
    env["PATH"] = os.pathsep.join([env.get("PATH", "")] + extra)
    out = subprocess.run([cuobjdump, "--dump-sass", path], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"sass_diff: {cuobjdump} --dump-sass {path} failed: {out.stderr.strip()[:500]}")
    return parse(out.stdout)


def opcode(insn):
    """The opcode with its modifiers ("HGMMA.64x128x16.F32.BF16"), past any predicate ("@!P0")."""
    words = insn.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else ""


def count(insns, op):
    return sum(1 for i in insns if opcode(i) == op or opcode(i).startswith(op + "."))


def pair_renamed(a, b):
    """{key in A only: key in B only} for functions of one arch with the same instructions (each B
    function paired once, in name order)."""
    free = sorted(set(b) - set(a))
    pairs = {}
    for key in sorted(set(a) - set(b)):
        for other in free:
            if other[0] == key[0] and b[other] == a[key]:
                pairs[key] = other
                free.remove(other)
                break
    return pairs


def compare(a, b, match=None, renamed=False):
    """Rows (status, arch, name, len_a, len_b, {opcode: (count_a, count_b)}) over both sides; with
    `renamed`, functions paired by pair_renamed are one row ("renamed", A's name)."""
    pairs = pair_renamed(a, b) if renamed else {}
    paired_b = set(pairs.values())
    rows = []
    for key in sorted((set(a) | set(b)) - paired_b, key=lambda k: (k[0], k[1])):
        if match and not (re.search(match, key[1]) or (key in pairs and re.search(match, pairs[key][1]))):
            continue
        fa, fb = a.get(key), b.get(pairs.get(key, key))
        if key in pairs:
            status = "renamed"
        elif fa is None or fb is None:
            status = "only in A" if fb is None else "only in B"
        else:
            status = "identical" if fa == fb else "differs"
        ops = {}
        if status not in ("identical", "renamed"):
            ops = {op: (count(fa or [], op), count(fb or [], op)) for op in OPCODES}
        rows.append((status, key[0], key[1], len(fa or []), len(fb or []), ops))
    return rows


def report(rows, label_a="A", label_b="B"):
    tally = collections.Counter(r[0] for r in rows)
    lines = [f"{len(rows)} functions: " + ", ".join(f"{tally[s]} {s}" for s in
                                                    ("identical", "renamed", "differs", "only in A", "only in B")
                                                    if tally[s]),
             "",
             f"| # | status | arch | instructions {label_a} / {label_b} | changed opcodes ({label_a} -> {label_b}) |",
             "|---|---|---|---|---|"]
    for n, (status, arch, _, la, lb, ops) in enumerate(rows):
        moved = ", ".join(f"{op} {x} -> {y}" for op, (x, y) in ops.items() if x != y)
        lines.append(f"| {n} | {status} | {arch} | {la} / {lb} | {moved} |")
    lines += ["", "Functions:"] + [f"- {n}: `{r[2]}`" for n, r in enumerate(rows)]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a", help="base: binary, object, cubin or a cuobjdump --dump-sass text")
    ap.add_argument("b", help="variant: the same kinds")
    ap.add_argument("--match", help="only functions whose mangled name matches this regex")
    ap.add_argument("--renamed", action="store_true",
                    help="pair functions found on one side only by identical instructions (renamed kernels)")
    ap.add_argument("--expect", choices=("changed", "same"),
                    help="exit 1 unless some matched function differs (changed) or none does (same)")
    args = ap.parse_args(argv)
    cuobjdump = find_cuobjdump()
    rows = compare(load(args.a, cuobjdump), load(args.b, cuobjdump), args.match, args.renamed)
    print(report(rows))
    changed = any(r[0] not in ("identical", "renamed") for r in rows)
    if not rows:
        print("sass_diff: no function matched", file=sys.stderr)
        return 1
    if args.expect == "changed" and not changed:
        print("sass_diff: expected a change, every matched function is identical", file=sys.stderr)
        return 1
    if args.expect == "same" and changed:
        print("sass_diff: expected identical functions, some differ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
