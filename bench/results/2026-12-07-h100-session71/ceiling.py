#!/usr/bin/env python3
"""Issue 7's rows at ncu's locked clock (call 3's records, main's kernels beside cuDNN) against the tensor
pipe: each row's ratio ours / cuDNN, its target, our kernel's tensor-pipe active share of the SMs' active
cycles and the SMs' active share of its elapsed cycles (call 3's --pipe tables), and the ceiling a kernel
doing our MMAs with the pipe busy on every cycle of every SM would reach: ratio / (pipe x SMs active).

    python3 ceiling.py PEERS_JSON > ceiling.md     (run from this folder)
"""

import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bench"))
import bench_report as report  # noqa: E402
import sm90_targets  # noqa: E402

PIPE_ROW = re.compile(r"^\| fwd \| (\d+) \| (yes|no) \| (\d+) \| [0-9.]+ \| ([0-9.]+) \| ([0-9.]+) \| [0-9.]+ \| ([0-9.]+) \| ([0-9.]+) \|$")


def pipe_shares(path):
    """{(d, causal, seqlen): (ours pipe %, ours SMs active %, cuDNN pipe %, cuDNN SMs active %)}."""
    out = {}
    with open(path) as f:
        for line in f:
            m = PIPE_ROW.match(line.strip())
            if m:
                d, c, s = int(m[1]), m[2] == "yes", int(m[3])
                out[(d, c, s)] = tuple(float(m[i]) for i in range(4, 8))
    return out


def main():
    fa3 = report.load_fa3(sys.argv[1])
    lines = ["# Issue 7's rows at ncu's locked clock against the tensor pipe (session 71, call 3)", "",
             "ratio: ours / cuDNN at the locked clock (main's kernels); pipe: the tensor pipe's active share of "
             "the SMs' active cycles; SMs: the SMs' active share of the kernel's elapsed cycles; ceiling: ratio / "
             "(our pipe x our SMs), what our MMAs would reach with the pipe busy on every cycle of every SM (for "
             "causal rows an upper bound only where no MMA is wasted on masked keys: ours computes whole "
             "diagonal blocks). reachable: ceiling >= target.", "",
             "| dtype | d | causal | seqlen | ratio | target | met | ours pipe % | ours SMs % | cuDNN pipe % | "
             "cuDNN SMs % | ceiling | reachable |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for dt in ("bf16", "fp16"):
        with open(os.path.join(HERE, "call3", f"ncu-pipe-{dt}.json")) as f:
            recs = json.load(f)["records"]
        shares = pipe_shares(os.path.join(HERE, "call3", f"ncu-pipe-{dt}.md"))
        for r in sm90_targets.rows([recs], fa3):
            dtype, d, causal, s, _, _, ratio, _, goal, met = r[:10]
            op, oa, cp, ca = shares[(d, causal, s)]
            ceiling = ratio / (op / 100) / (oa / 100)
            lines.append(f"| {dtype} | {d} | {'yes' if causal else 'no'} | {s} | {ratio:.3f} | {goal:.2f} | "
                         f"{'yes' if met else 'no'} | {op:.1f} | {oa:.1f} | {cp:.1f} | {ca:.1f} | {ceiling:.2f} | "
                         f"{'yes' if ceiling >= goal else '**no**'} |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
