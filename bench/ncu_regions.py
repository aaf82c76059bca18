#!/usr/bin/env python3
"""Stall samples of a kernel's main loop, by region, from an ncu source page.

Reads the CSV that `ncu --section SourceCounters --section WarpStateStats --page source
--print-source sass --csv ...` prints (one kernel launch; lines before the header, such as the
profiled program's own output, are skipped). The main loop is the innermost loop (the shortest span
of a backward branch) around the largest group of HGMMA instructions (HGMMAs at most 20
instructions apart). Each loop instruction falls in one region: the wgmma issue (from the loop head
to the group's last HGMMA: the stage waits, the ping-pong turn, descriptors and the HGMMAs), then by
opcode: wgmma waits, exps (FFMA, MUFU, FADD), max (FMNMX), checks (FSETP, VOTE, SHFL, PLOP3, FSEL),
convert (F2FP), rescale (FMUL), barriers (SYNCS, BAR, WARPSYNC) and the rest. Prints a Markdown
table (samples, share of the loop, warp-level instructions executed, top stall reasons) and the
loop's instructions with the most samples.

    python3 bench/ncu_regions.py ncu-src.csv --title "d 128 bf16 non-causal 8k" [--top 15]
"""

import argparse
import collections
import csv
import re
import sys

REGIONS = (
    ("wgmma waits", ("WARPGROUP.DEPBAR",)),
    ("exps (FFMA, MUFU, FADD)", ("MUFU", "FFMA", "FADD")),
    ("max (FMNMX)", ("FMNMX",)),
    ("checks (FSETP, VOTE, SHFL, PLOP3, FSEL)", ("FSETP", "VOTE", "SHFL", "PLOP3", "FSEL")),
    ("convert (F2FP)", ("F2FP",)),
    ("rescale (FMUL)", ("FMUL",)),
    ("barriers (SYNCS, BAR, WARPSYNC)", ("SYNCS", "BAR", "WARPSYNC")),
)
ISSUE = "wgmma issue (stage waits, turn, descriptors, HGMMA)"
OTHER = "other"


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def read_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    starts = [i for i, r in enumerate(rows) if r and r[0] == "Address"]
    if not starts:
        sys.exit(f"{path}: no 'Address' header (ncu --page source --csv output expected)")
    header = rows[starts[0]]
    col = {name: i for i, name in enumerate(header)}
    for need in ("Source", "Warp Stall Sampling (All Samples)", "Instructions Executed"):
        if need not in col:
            sys.exit(f"{path}: column '{need}' missing")
    stalls = [c for c in header if c.startswith("stall_") and "Not Issued" not in c]
    out = []
    for r in rows[starts[0] + 1:]:
        if len(r) != len(header) or not r[0].startswith("0x"):
            continue
        out.append({
            "addr": int(r[0], 16),
            "sass": r[col["Source"]].strip(),
            "samples": number(r[col["Warp Stall Sampling (All Samples)"]]),
            "executed": number(r[col["Instructions Executed"]]),
            "stalls": {c[len("stall_"):]: number(r[col[c]]) for c in stalls},
        })
    return out


def opcode(sass):
    words = sass.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else ""


def main_loop(ins):
    """(first, last) instruction indices of the innermost loop around the largest HGMMA group."""
    hgmma = [i for i, x in enumerate(ins) if opcode(x["sass"]).startswith("HGMMA")]
    if not hgmma:
        sys.exit("no HGMMA instruction in the source page")
    groups = []
    for i in hgmma:
        if groups and i - groups[-1][-1] <= 20:
            groups[-1].append(i)
        else:
            groups.append([i])
    group = max(groups, key=len)
    g0, g1 = ins[group[0]]["addr"], ins[group[-1]]["addr"]
    best = None
    for i, x in enumerate(ins):
        m = re.search(r"BRA (0x[0-9a-f]+)", x["sass"])
        if not m:
            continue
        target = int(m.group(1), 16)
        if target <= g0 and x["addr"] >= g1 and (best is None or x["addr"] - target < best[1] - best[0]):
            best = (target, x["addr"])
    if best is None:
        sys.exit("no backward branch around the largest HGMMA group")
    first = next(i for i, x in enumerate(ins) if x["addr"] >= best[0])
    last = max(i for i, x in enumerate(ins) if x["addr"] <= best[1])
    return first, last, g1


def region_of(x, last_hgmma):
    if x["addr"] <= last_hgmma:
        return ISSUE
    op = opcode(x["sass"])
    for name, prefixes in REGIONS:
        if op.startswith(prefixes):
            return name
    return OTHER


def report(ins, title, top):
    first, last, last_hgmma = main_loop(ins)
    loop = ins[first:last + 1]
    kernel_samples = sum(x["samples"] for x in ins)
    loop_samples = sum(x["samples"] for x in loop)
    order = [ISSUE] + [name for name, _ in REGIONS] + [OTHER]
    acc = {name: [0.0, 0.0, collections.Counter()] for name in order}
    for x in loop:
        a = acc[region_of(x, last_hgmma)]
        a[0] += x["samples"]
        a[1] += x["executed"]
        a[2].update(x["stalls"])
    lines = [f"### {title}" if title else "### main loop", ""]
    share = 100.0 * loop_samples / kernel_samples if kernel_samples else 0.0
    lines.append(f"{len(loop)} instructions, {loop_samples:.0f} of the kernel's {kernel_samples:.0f} samples "
                 f"({share:.1f}%)")
    lines += ["", "| region | samples | share of the loop | instructions executed | top stall reasons |",
              "|---|---|---|---|---|"]
    for name in order:
        samples, executed, stalls = acc[name]
        if samples == 0 and executed == 0:
            continue
        reasons = ", ".join(f"{k} {v:.0f}" for k, v in stalls.most_common(3) if v > 0)
        part = 100.0 * samples / loop_samples if loop_samples else 0.0
        lines.append(f"| {name} | {samples:.0f} | {part:.1f}% | {executed:.0f} | {reasons} |")
    lines += ["", f"Most sampled loop instructions (offset from the loop head):", "",
              "| offset | samples | instruction | top stall reasons |", "|---|---|---|---|"]
    head = loop[0]["addr"]
    for x in sorted(loop, key=lambda x: -x["samples"])[:top]:
        reasons = ", ".join(f"{k} {v:.0f}" for k, v in collections.Counter(x["stalls"]).most_common(2) if v > 0)
        lines.append(f"| +{x['addr'] - head:#x} | {x['samples']:.0f} | `{x['sass']}` | {reasons} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--title", default="")
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args(argv)
    sys.stdout.write(report(read_rows(args.csv), args.title, args.top))


if __name__ == "__main__":
    main()
