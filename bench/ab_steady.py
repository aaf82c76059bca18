#!/usr/bin/env python3
"""A/B of prebuilt `flashcute` binaries at the GPU's steady state under its power cap, with the SM
clock and board power each ran at.

bench.py and scripts/ab-cli time short segments (tens of launches), whose ratios move by several
percent between runs of the same kernels on a power-capped H100 (docs/perf-notes.md, sessions 15 and
16). Here every variant runs one case for thousands of back-to-back launches (`flashcute bench
--iters N --no-flush`, seconds of work), long enough for the clock to settle where the power cap
puts it; a host thread samples NVML (bench.py's GpuSampler) throughout, and each phase reports the
mean clock and power over the last 60% of its GPU work (the clock's settling is behind; for our
variants that work is the warm-up and timed launches at the end of the CLI's process, run_cli). In
session 16 two phases of the same kernel read 598.5 and 601.3 TFLOP/s (cuDNN 599.8 and 599.1).
Fewer launches (sessions 34-37 ran 600 to spare device time) are a fraction of a second at the short
rows, where the columns show whether the phase reached the power cap at all.

    python3 bench/ab_steady.py --bin-dir ab-bin --case 128:no:8192 --case 64:yes:4096 [--peer sdpa_cudnn]
    python3 bench/ab_steady.py --pass bwd --backend sm80 --case 128:yes:4096 --peer sdpa_flash --iters 500
    python3 bench/ab_steady.py --variants base --peer sdpa_cudnn --case 64:no:512 ... --records out/steady
        (then bench/sm90_targets.py out/steady-round*.json: a steady-state grid against the issue-7 targets)

Variants: the folders of --bin-dir holding a `flashcute` binary ("base" first, the reference of every
ratio), run in a rotated order each round; a folder's optional `args` file adds its words to that
variant's `flashcute bench` command (the same binary with `--deterministic yes` in one folder measures
the backward's deterministic mode against the default). --peer adds one of bench.py's implementations (SDPA's
cuDNN or FlashAttention-2 backend, ...) on the same shape and pass, timed the same way in this
process (needs torch). Cases are
D:CAUSAL(yes|no):SEQLEN with BENCHMARKING.md's batch = 16384 / seqlen and heads = 2048 / d.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import GpuSampler, Impls, window_stats  # noqa: E402
from bench_grid import pass_flops, shape_for, tflops  # noqa: E402

CLI_WARMUP = 20  # `flashcute bench` launches before the timed ones
TFLOPS = re.compile(r"([0-9.]+) ms\s+([0-9.]+) TFLOP/s")  # a `flashcute bench` result line


def parse_case(text):
    d, causal, s = text.split(":")
    if causal not in ("yes", "no"):
        raise argparse.ArgumentTypeError(f"case {text}: CAUSAL is yes or no")
    return int(d), causal == "yes", int(s)


def rotated(names, r):
    """Round r's order of the variants: the list rotated by r, so each leads one round in turn."""
    return [names[(j + r) % len(names)] for j in range(len(names))]


def variants_in(bin_dir):
    names = sorted(n for n in os.listdir(bin_dir) if os.path.isfile(os.path.join(bin_dir, n, "flashcute")))
    return (["base"] if "base" in names else []) + [n for n in names if n != "base"]


def variant_args(folder):
    """Extra `flashcute bench` arguments of a variant: the words of NAME/args where that file exists
    (e.g. `--deterministic yes`, so that one binary in two folders compares two run-time modes)."""
    path = os.path.join(folder, "args")
    if not os.path.isfile(path):
        return []
    with open(path) as f:
        return f.read().split()


def run_cli(binary, case, a, extra=()):
    """One phase of our kernel: (t0, t1, TFLOP/s), [t0, t1] the host times of its GPU work; `extra` adds
    `flashcute bench` words after the variant's own (e.g. another batch x heads shape).

    The process starts the CUDA context, allocates and fills its inputs first, and its warm-up and
    timed launches come last, so t0 is t1 less their time (launches x the median), not the process's
    start: at 600 launches of a short row the launches are a small part of the process's time, and a
    window over the process read the idle GPU (session 37: 120-155 W beside cuDNN's 164-630 W)."""
    d, causal, s = case
    cmd = [binary, "bench", "--dtype", a.dtype, "--d", str(d), "--seqlen", str(s), "--causal",
           "true" if causal else "false", "--pass", a.passes, "--backend", a.backend, "--warmup", str(CLI_WARMUP),
           "--iters", str(a.iters), "--no-flush"] + variant_args(os.path.dirname(binary)) + list(extra)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    t1 = time.perf_counter()
    found = TFLOPS.findall(out.stdout)
    if out.returncode != 0 or len(found) != 1:
        raise RuntimeError(f"{' '.join(cmd)} failed ({out.returncode}): {out.stdout[-500:]}{out.stderr[-500:]}")
    busy = (CLI_WARMUP + a.iters) * float(found[0][0]) / 1e3
    return max(t0, t1 - busy), t1, float(found[0][1])


def peer_runner(a):
    """A peer of bench.py's (e.g. sdpa_cudnn, sdpa_flash) on the same shape and pass, bound and run in
    its context as bench.py does, timed like a variant: (t0, t1, TFLOP/s). `shape` (batch, heads) and
    `iters` override the grid's shape for the case and a.iters."""
    import torch

    impls = Impls(torch, None, [a.peer], no_flex=True)
    if not impls.names:
        sys.exit(f"ab_steady: {'; '.join(impls.notes)}")
    dtype = torch.bfloat16 if a.dtype == "bf16" else torch.float16

    def run(case, shape=None, iters=None):
        d, causal, s = case
        b, h = shape if shape is not None else shape_for(s, d)
        iters = iters if iters is not None else a.iters
        bwd = a.passes == "bwd"
        q, k, v = (torch.randn(b, s, h, d, device="cuda", dtype=dtype, requires_grad=bwd) for _ in range(3))
        prep = impls.prepare(a.peer, q, k, v, torch.randn(b, s, h, d, device="cuda", dtype=dtype), causal)
        t0 = time.perf_counter()
        with impls.context(a.peer, a.passes):
            if bwd:
                out = prep.call()
                call = lambda: torch.autograd.grad(out, prep.leaves, prep.dout, retain_graph=True)  # noqa: E731
            else:
                call = prep.call
            for _ in range(20):
                call()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iters):
                call()
            end.record()
            torch.cuda.synchronize()
        t1 = time.perf_counter()
        flops = pass_flops(dict(batch=b, heads=h, seqlen=s, d=d, causal=causal), a.passes)
        return t0, t1, tflops(flops, start.elapsed_time(end) / iters)

    return run


def steady(samples, t0, t1):
    """NVML means over the last 60% of a phase's GPU work [t0, t1] (None without samples)."""
    return window_stats(samples, t0 + 0.4 * (t1 - t0), t1)


def report(a, cases, names, phases):
    """phases: {(round, case, name): (tflops, stats or None)} -> markdown."""
    base = names[0]
    head = "| d | causal | seqlen | " + " | ".join(f"{n} TFLOP/s (MHz, W)" for n in names)
    head += " | " + " | ".join(f"{n} / {base}" for n in names[1:]) + " |"
    # "cap" only where some phase has NVML's clock-event reasons: without them the table reads as before
    capped = any("power_cap_frac" in st for _, st in phases.values() if st)
    lines = [f"Steady state: {a.passes}, {a.dtype}, {a.iters} launches per phase, {a.rounds} rounds; TFLOP/s and ratios are "
             "medians over the rounds (ratios of the same round), clock and power NVML means over the last "
             "60% of each phase's launches, medians over the rounds" +
             (f" (power: NVML's {a.power_kind} reading)" if getattr(a, "power_kind", None) else "") +
             ("; cap: the fraction of those NVML samples with the SW power-cap clock-event reason set, median "
              "over the rounds." if capped else "."), "", head,
             "|" + "---|" * (3 + len(names) + len(names) - 1)]
    for case in cases:
        d, causal, s = case
        row = f"| {d} | {'yes' if causal else 'no'} | {s} |"
        for n in names:
            got = [phases[(r, case, n)] for r in range(a.rounds) if (r, case, n) in phases]
            if not got:
                row += " – |"
                continue
            tf = statistics.median(g[0] for g in got)
            st = [g[1] for g in got if g[1]]
            clock = f"{statistics.median(x['clock_mhz'] for x in st):.0f}" if st else "–"
            power = f"{statistics.median(x['power_w'] for x in st):.0f}" if st else "–"
            caps = [x["power_cap_frac"] for x in st if "power_cap_frac" in x]
            cap = f", cap {statistics.median(caps):.2f}" if caps else ""
            row += f" {tf:.1f} ({clock}, {power}{cap}) |"
        for n in names[1:]:
            rs = [phases[(r, case, n)][0] / phases[(r, case, base)][0] for r in range(a.rounds)
                  if (r, case, n) in phases and (r, case, base) in phases]
            row += f" {statistics.median(rs):.3f} ({min(rs):.3f}-{max(rs):.3f}) |" if rs else " – |"
        lines.append(row)
    return "\n".join(lines)


def round_records(a, names, phases, r):
    """Round r's phases as bench.py records: the first variant (base, the reference) is flashcute_<backend>,
    the peer keeps its bench.py name, other variants are flashcute_<backend>:<name>."""
    recs = []
    for (rr, case, n), (tf, stats) in sorted(phases.items(), key=lambda kv: (kv[0][1], kv[0][2])):
        if rr != r:
            continue
        d, causal, s = case
        b, h = shape_for(s, d)
        impl = n if n == a.peer else f"flashcute_{a.backend}" + ("" if n == names[0] else f":{n}")
        rec = dict(impl=impl, dtype=a.dtype, d=d, causal=causal, seqlen=s, batch=b, heads=h, status="ok",
                   tflops=tf, reps=a.iters)
        rec["pass"] = a.passes
        if stats:
            rec["clock_mhz"], rec["power_w"] = stats["clock_mhz"], stats["power_w"]
            rec.update({k: stats[k] for k in ("power_cap_frac", "thermal_frac") if k in stats})
        recs.append(rec)
    return recs


def write_records(a, names, phases):
    date = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for r in range(a.rounds):
        doc = {"meta": {"runs": [{"date": date, "git": f"ab_steady round {r}", "method":
                                  f"ab_steady: {a.iters} back-to-back launches per phase, no flush, phases alternated",
                                  "power": getattr(a, "power_kind", None)}]},
               "records": round_records(a, names, phases, r)}
        with open(f"{a.records}-round{r}.json", "w") as f:
            json.dump(doc, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin-dir", default="ab-bin", help="folders NAME/flashcute, one per variant")
    ap.add_argument("--variants", default=None, help="comma list of folder names (default: all, base first)")
    ap.add_argument("--case", action="append", type=parse_case, required=True, help="D:CAUSAL(yes|no):SEQLEN")
    ap.add_argument("--iters", type=int, default=2500, help="launches per phase")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--dtype", default="bf16", choices=("bf16", "fp16"))
    ap.add_argument("--pass", dest="passes", default="fwd", choices=("fwd", "bwd"))
    ap.add_argument("--backend", default="sm90", choices=("sm80", "sm90"), help="our forward path (bwd: sm80)")
    ap.add_argument("--peer", default="none", help="none, or a bench.py implementation (sdpa_cudnn, sdpa_flash, ...)")
    ap.add_argument("--out", default=None, help="also write the table here")
    ap.add_argument("--records", default=None,
                    help="also write each round's phases as PREFIX-roundN.json, bench.py's results format "
                         "(the first variant as flashcute_<backend>, so bench/sm90_targets.py reads them)")
    a = ap.parse_args()
    names = a.variants.split(",") if a.variants else variants_in(a.bin_dir)
    if not names:
        sys.exit(f"ab_steady: no NAME/flashcute under {a.bin_dir}")
    runners = {n: (lambda case, n=n: run_cli(os.path.join(a.bin_dir, n, "flashcute"), case, a)) for n in names}
    if a.peer != "none":
        runners[a.peer] = peer_runner(a)
        names = names + [a.peer]
    sampler = GpuSampler(0, period_s=0.01)
    if not sampler.available:
        print("ab_steady: NVML not available, no clock or power columns", file=sys.stderr)
    a.power_kind = getattr(sampler, "power_kind", None)  # tests' stand-in samplers have none
    phases, spans = {}, []
    sampler.start()
    try:
        for r in range(a.rounds):
            for case in a.case:
                for n in rotated(names, r):
                    t0, t1, tf = runners[n](case)
                    spans.append((r, case, n, t0, t1, tf))
                    print(f"ab_steady: round {r} {case} {n}: {tf:.1f} TFLOP/s", flush=True)
    finally:
        samples = sampler.stop()
    for r, case, n, t0, t1, tf in spans:
        phases[(r, case, n)] = (tf, steady(samples, t0, t1))
    if a.records:
        write_records(a, names, phases)
    table = report(a, a.case, names, phases)
    print(table)
    if a.out:
        with open(a.out, "w") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    main()
