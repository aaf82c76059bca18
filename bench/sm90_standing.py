#!/usr/bin/env python3
"""Issue 7's standing: every row of the SM90 forward grid at its latest steady-state measurement (no torch).

The standing's rule: a row's reading is the latest ab_steady run beside cuDNN of the kernel main runs now;
its ratio is the median over that run's rounds of ours / cuDNN inside each round, and the row is met when
that median reaches the target (bench/sm90_targets.py's rule). Which runs measured main's current kernels
is not in the records, so a manifest (JSON) names them:

    {"sources": [
        {"id": "s66-grid", "what": "...", "records": ["GLOB", ...], "ours": "flashcute_sm90",
         "exclude": [{"d": 128, "seqlen_max": 2048, "why": "..."}]},
        {"id": "s66-fp16-2k", "what": "...", "log": "PATH", "dtype": "fp16", "ours": "grid66",
         "date": "ISO date", "date_why": "..."},
        ...]}

Paths and globs are relative to the manifest's folder. `records` are ab_steady --records files (one JSON per
round; `ours` is the impl of main's kernel in them: flashcute_sm90, or flashcute_sm90:NAME for a later
variant); `log` is an ab_steady console log (lines "ab_steady: round R (d, causal, seqlen) NAME: X TFLOP/s",
`ours` the variant's NAME, `dtype` the run's) for a run whose records were not kept. A run is one ab_steady
invocation: the records' meta date (a log's manifest `date`). `exclude` drops rows of a source whose kernel
has changed on main since. Every round of a run counts where it has both ours and cuDNN. An optional
"locked": {"path": ..., "what": ..., "exclude": [...]} names a locked-clock table (session 71's ceiling.md)
whose ratio, tensor-pipe share and ceiling are shown beside each row.

    python3 bench/sm90_standing.py bench/results/sm90-standing.json --fa3-json PEERS_JSON > sm90-standing.md
    ... --plot sm90-standing.png   # the figure of bench/sm90_targets.py
"""

import argparse
import glob
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_report as report  # noqa: E402
import sm90_targets  # noqa: E402

LOG_LINE = re.compile(r"^ab_steady: round (\d+) \((\d+), (True|False), (\d+)\) (\S+): ([0-9.]+) TFLOP/s$")
PEER = "sdpa_cudnn"


def excluded(src, d, seqlen):
    """Whether the source's `exclude` list drops row (d, seqlen)."""
    for e in src.get("exclude", []):
        if e.get("d", d) == d and seqlen <= e.get("seqlen_max", seqlen) and seqlen >= e.get("seqlen_min", seqlen):
            return True
    return False


def runs_of_source(src, root):
    """[(date, {(dtype, d, causal, seqlen): {round: {"ours": TFLOP/s, "cudnn": TFLOP/s}}})] of one
    manifest source, one entry per ab_steady invocation in it."""
    runs = {}
    if "log" in src:
        path = os.path.join(root, src["log"])
        if "date" not in src or "dtype" not in src:
            raise SystemExit(f"{src['id']}: a log source needs its dtype and date")
        by_case = {}
        with open(path) as f:
            for line in f:
                m = LOG_LINE.match(line.strip())
                if not m:
                    continue
                rnd, d, causal, seqlen, name, tf = m.groups()
                who = "ours" if name == src["ours"] else "cudnn" if name == PEER else None
                if who:
                    case = (src["dtype"], int(d), causal == "True", int(seqlen))
                    by_case.setdefault(case, {}).setdefault(int(rnd), {})[who] = float(tf)
        if not any("ours" in v for rounds in by_case.values() for v in rounds.values()):
            raise SystemExit(f"{src['id']}: {src['log']} has no ab_steady line of {src['ours']}")
        runs[src["date"]] = by_case
    else:
        paths = sorted({p for g in src["records"] for p in glob.glob(os.path.join(root, g))})
        if not paths:
            raise SystemExit(f"{src['id']}: no file matches {src['records']}")
        for path in paths:
            with open(path) as f:
                doc = json.load(f)
            (meta,) = doc["meta"]["runs"]
            m = re.search(r"round (\d+)", meta.get("git", ""))
            rnd = int(m.group(1)) if m else 0
            by_case = runs.setdefault(meta["date"], {})
            found = False
            for r in doc["records"]:
                if r["pass"] != "fwd" or r["status"] != "ok":
                    continue
                who = "ours" if r["impl"] == src["ours"] else "cudnn" if r["impl"] == PEER else None
                found |= who == "ours"
                if who:
                    case = (r["dtype"], r["d"], r["causal"], r["seqlen"])
                    by_case.setdefault(case, {}).setdefault(rnd, {})[who] = r["tflops"]
            if not found:
                raise SystemExit(f"{src['id']}: {os.path.relpath(path, root)} has no ok fwd record of {src['ours']}")
    out = []
    for date, by_case in runs.items():
        kept = {c: v for c, v in by_case.items() if not excluded(src, c[1], c[3])}
        out.append((date, kept))
    return out


LOCKED_ROW = re.compile(r"^\| (bf16|fp16) \| (\d+) \| (yes|no) \| (\d+) \| ([0-9.]+) \| [0-9.]+ \| (?:yes|no) \| "
                        r"([0-9.]+) \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| ([0-9.]+) \| (?:yes|no|\*\*no\*\*) \|$")


def locked_rows(src, root):
    """{(dtype, d, causal, seqlen): (ours / cuDNN, ours' tensor-pipe %, ceiling)} from a locked-clock table
    (session 71's ceiling.md: ncu's base clock, main's kernels of that day), less the source's `exclude`."""
    out = {}
    with open(os.path.join(root, src["path"])) as f:
        for line in f:
            m = LOCKED_ROW.match(line.strip())
            if m and not excluded(src, int(m[2]), int(m[4])):
                out[(m[1], int(m[2]), m[3] == "yes", int(m[4]))] = (float(m[5]), float(m[6]), float(m[7]))
    if not out:
        raise SystemExit(f"{src['path']}: no row of a locked-clock table")
    return out


def standing(manifest, root, fa3, min_rounds=1):
    """[(case, row dict)] sorted by case: each row's latest run among the manifest's sources (by date) with at
    least `min_rounds` rounds of that row, with its per-round ratios, their median, the target and whether it
    is met; rows of the peer JSON's grid that no such run covers have row None."""
    latest = {}
    for src in manifest["sources"]:
        for date, by_case in runs_of_source(src, root):
            for case, rounds in by_case.items():
                pairs = [(v["ours"], v["cudnn"]) for _, v in sorted(rounds.items()) if "ours" in v and "cudnn" in v]
                if len(pairs) >= max(1, min_rounds) and (case not in latest or date > latest[case]["date"]):
                    latest[case] = dict(date=date, source=src["id"], pairs=pairs)
    rows = []
    dtypes = sorted({c[0] for c in latest} | {"bf16", "fp16"})
    grid = sorted({(d, causal, seqlen) for (d, causal, seqlen, p) in fa3 if p == "fwd"})
    for dtype in dtypes:
        for d, causal, seqlen in grid:
            case = (dtype, d, causal, seqlen)
            row = latest.get(case)
            if row is not None:
                stored = fa3[(d, causal, seqlen, "fwd")]
                f = stored["fa3"] / stored["cudnn"]
                ratios = [o / c for o, c in row["pairs"]]
                goal = sm90_targets.target(seqlen, f)
                ratio = statistics.median(ratios)
                row.update(ratios=ratios, ratio=ratio, f=f, target=goal, met=ratio >= goal,
                           thin=ratio >= goal and min(ratios) < goal,
                           ours=statistics.median(o for o, _ in row["pairs"]),
                           cudnn=statistics.median(c for _, c in row["pairs"]))
            rows.append((case, row))
    return rows


def render(rows, manifest, gemm=745.0, rows2=None, locked=None):
    """The standing as markdown: the count (and, given `rows2`, standing()'s rows with min_rounds 2, that
    count), the rows that ask for at least `gemm` TFLOP/s (the bf16 GEMM's lowest steady reading on the
    H100, BENCHMARKING.md), the sources, then one line per row."""
    have = [r for _, r in rows if r is not None]
    met = [r for r in have if r["met"]]
    thin = [r for r in met if r["thin"]]
    single = [r for r in met if len(r["ratios"]) == 1]
    missing = [c for c, r in rows if r is None]
    lines = ["# Issue 7's standing: every row at its latest steady-state measurement", ""]
    lines.append(
        f"**{len(met)} of {len(rows)} rows met** by the rule (each row's latest ab_steady run beside cuDNN of the "
        "kernel main runs now; met on the median over that run's rounds of ours / cuDNN). "
        f"Of those, {len(thin)} thin (met on the median, with a round below the target) and {len(single)} from a "
        f"single round: **{len(met) - len({id(r) for r in thin + single})} of {len(rows)}** met on two or more "
        "rounds, each at or above the target." + (f" Rows without a measurement: {len(missing)}." if missing else ""))
    if rows2 is not None:
        met2 = sum(1 for _, r in rows2 if r is not None and r["met"])
        none2 = sum(1 for _, r in rows2 if r is None)
        lines += ["", f"Taking each row's latest run with two or more rounds of it instead (a single-round run "
                  f"skipped): **{met2} of {len(rows2)}** met" + (f"; {none2} rows then have no measurement." if none2
                                                                 else ".")]
    beyond = [(c, r) for c, r in rows if r is not None and not r["met"] and r["target"] * r["cudnn"] >= gemm]
    if beyond:
        lines += ["", f"{len(beyond)} of the unmet rows ask ours for at least {gemm:.0f} TFLOP/s (target x cuDNN), "
                  "the lowest steady-state reading of a bf16 8192^3 GEMM on this H100: "
                  + ", ".join(f"{c[0]} d {c[1]} {'causal' if c[2] else 'non-causal'} {c[3]}" for c, _ in beyond) + "."]
    lines += ["", "Target: ours / cuDNN >= 1.05 x max(1, F) from 2k keys, >= max(1, F) at 512 and 1k; F = FA3 / "
              "cuDNN of the stored peer JSON (bf16 rows, used for fp16 too). Generated by `bench/sm90_standing.py` "
              "from the manifest's sources." + (" " + manifest["note"] if manifest.get("note") else ""), ""]
    for src in manifest["sources"]:
        lines.append(f"- `{src['id']}`: {src['what']}")
        for e in src.get("exclude", []):
            lines.append(f"  - excluded: d {e.get('d', 'any')}"
                         + (f", {e['seqlen_min']} keys and more" if "seqlen_min" in e else "")
                         + (f", up to {e['seqlen_max']} keys" if "seqlen_max" in e else "") + f" ({e['why']})")
        if "date_why" in src:
            lines.append(f"  - date {src['date']}: {src['date_why']}")
    lk = manifest.get("locked")
    if locked is not None:
        lines.append(f"- locked clock (`{lk['path']}`): {lk['what']}")
        for e in lk.get("exclude", []):
            lines.append(f"  - not shown: d {e.get('d', 'any')}" + (f", up to {e['seqlen_max']} keys" if "seqlen_max" in e
                                                                   else "") + f" ({e['why']})")
    lines += ["", "ours, cuDNN: TFLOP/s (medians over the run's rounds); rounds: ours / cuDNN in each round; needed: the "
              "TFLOP/s the target asks of ours at that cuDNN (target x cuDNN; a bf16 8192^3 GEMM ran at 745-798 on "
              "this H100, BENCHMARKING.md)." + (" locked: ours / cuDNN at ncu's locked clock, ours' tensor-pipe share "
                                              "of its SMs' active cycles, and the ceiling (the ratio a kernel doing "
                                              "our MMAs with the pipe busy on every cycle would reach)."
                                              if locked is not None else ""), "",
              "| dtype | d | causal | seqlen | ours | cuDNN | ours/cuDNN | rounds | F | target | needed | met | source |"
              + (" locked ratio / pipe % / ceiling |" if locked is not None else ""),
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if locked is not None else "")]
    for (dtype, d, causal, seqlen), r in rows:
        head = f"| {dtype} | {d} | {'yes' if causal else 'no'} | {seqlen} |"
        tail = ""
        if locked is not None:
            lr = locked.get((dtype, d, causal, seqlen))
            tail = f" {lr[0]:.3f} / {lr[1]:.1f} / {lr[2]:.2f} |" if lr else " – |"
        if r is None:
            lines.append(head + " – | – | – | – | – | – | – | no measurement | – |" + tail)
            continue
        met_cell = ("yes (thin)" if r["thin"] else "yes") if r["met"] else "no"
        if r["met"] and len(r["ratios"]) == 1:
            met_cell += " (1 round)"
        rounds = ", ".join(f"{x:.3f}" for x in r["ratios"])
        lines.append(f"{head} {r['ours']:.0f} | {r['cudnn']:.0f} | {r['ratio']:.3f} | {rounds} | {r['f']:.2f} | "
                     f"{r['target']:.3f} | {r['target'] * r['cudnn']:.0f} | {met_cell} | `{r['source']}` |{tail}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("manifest")
    p.add_argument("--fa3-json", required=True)
    p.add_argument("--plot", help="also draw the rows into this PNG (needs matplotlib)")
    p.add_argument("--gemm", type=float, default=745.0,
                   help="TFLOP/s of the dense GEMM ceiling the summary compares each row's need with (default: 745)")
    a = p.parse_args(argv)
    with open(a.manifest) as f:
        manifest = json.load(f)
    root, fa3 = os.path.dirname(os.path.abspath(a.manifest)), report.load_fa3(a.fa3_json)
    rows = standing(manifest, root, fa3)
    locked = locked_rows(manifest["locked"], root) if "locked" in manifest else None
    sys.stdout.write(render(rows, manifest, a.gemm, standing(manifest, root, fa3, min_rounds=2), locked))
    if a.plot:
        table = [(c[0], c[1], c[2], c[3], r["ours"], r["cudnn"], r["ratio"], r["f"], r["target"], r["met"],
                  min(r["ratios"]), max(r["ratios"])) for c, r in rows if r is not None]
        sm90_targets.plot(table, a.plot, "issue 7's standing (latest steady-state run per row)")


if __name__ == "__main__":
    main()
