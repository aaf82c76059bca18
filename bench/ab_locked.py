#!/usr/bin/env python3
"""A/B of prebuilt `flashcute` binaries at ncu's locked clock: each variant's forward kernel time per
launch under `ncu --clock-control base` (every variant at the same fixed SM clock, L2 flushed before
each profiled kernel), so the ratio is one of work per clock, free of the power cap that moves
bench/ab_steady.py's phases by several percent.

    python3 bench/ab_locked.py --bin-dir build/ab-bin --case 128:no:16384 --case 128:yes:8192 \\
        [--variants base,qr] [--dtype bf16] [--rounds 3] [--iters 5] [--json out.json]

Variants: the folders of --bin-dir holding a `flashcute` binary ("base" first, the reference of every
ratio), run in a rotated order each round; a folder's optional `args` file adds its words to that
variant's `flashcute bench` command (bench/ab_steady.py's convention: device_lib.sh's `bins` writes
"--fwd-workspace zeroed" there). --cli-args adds words to every variant's command (e.g.
"--fwd-workspace no"). Cases are D:CAUSAL(yes|no):SEQLEN with BENCHMARKING.md's batch = 16384 /
seqlen and heads = 2048 / d. A variant's time in a round is the mean GPU time of its last --iters
forward-kernel launches (the CLI's --warmup launches before them are profiled and dropped).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ab_steady import parse_case, rotated, variant_args, variants_in  # noqa: E402
from bench_grid import git_revision, pass_flops, shape_for, tflops  # noqa: E402
from ncu_pairs import kernel_times  # noqa: E402

KERNEL = "regex:fwd_kernel"  # the SM90 / SM80 forward kernels' names (not the CLI's L2 flush)


def cli_command(binary, case, a):
    d, causal, s = case
    return [binary, "bench", "--backend", a.backend, "--pass", "fwd", "--dtype", a.dtype, "--d", str(d),
            "--seqlen", str(s), "--causal", "true" if causal else "false", "--warmup", str(a.warmup),
            "--iters", str(a.iters)] + variant_args(os.path.dirname(binary)) + a.cli_args.split()


def ncu_command(binary, case, a):
    return [a.ncu, "--clock-control", a.clock, "--metrics", "gpu__time_duration.sum", "--kernel-name", KERNEL,
            "--csv", "--page", "raw"] + cli_command(binary, case, a)


def launch_mean_us(times, a):
    """Mean GPU time (us) of the timed launches: the last --iters forward kernels profiled."""
    us = [t for name, t in times if "fwd_kernel" in name]
    if len(us) < a.iters:
        raise RuntimeError(f"{len(us)} forward kernels profiled, expected at least {a.iters}")
    return sum(us[-a.iters:]) / a.iters


def measure(binary, case, a):
    run = subprocess.run(ncu_command(binary, case, a), capture_output=True, text=True, timeout=a.timeout)
    if run.returncode != 0:
        raise RuntimeError(f"rc={run.returncode}: {(run.stdout + run.stderr)[-600:]}")
    return launch_mean_us(kernel_times(run.stdout), a)


def ratios(times_by_round, names):
    """{variant: [base us / variant us per round]}: above 1 = the variant is faster."""
    out = {}
    for n in names[1:]:
        out[n] = [rnd[names[0]] / rnd[n] for rnd in times_by_round if names[0] in rnd and n in rnd]
    return out


def report(a, cases, names, results):
    """Markdown: per case, each variant's median time and TFLOP/s and its ratio to the first variant
    (median over the rounds of the ratio inside each round, with its range)."""
    lines = [f"ncu --clock-control {a.clock}; {a.dtype}; fwd; mean GPU time of the last {a.iters} of "
             f"{a.warmup + a.iters} launches per run; {a.rounds} round(s), variants rotated; ratio = "
             f"{names[0]} time / variant time inside each round (above 1: faster than {names[0]})", "",
             "| d | causal | seqlen | variant | us (median) | TFLOP/s | ratio (median) | range |",
             "|---|---|---|---|---|---|---|---|"]
    for case in cases:
        d, causal, s = case
        rounds = results[case_key(case)]
        rs = ratios(rounds, names)
        batch, heads = shape_for(s, d)
        flops = pass_flops({"batch": batch, "heads": heads, "seqlen": s, "d": d, "causal": causal}, "fwd")
        for n in names:
            us = [rnd[n] for rnd in rounds if n in rnd]
            if not us:
                # No round reached the case (--deadline), or every run of this variant failed.
                why = "failed" if rounds else "not run (deadline)"
                lines.append(f"| {d} | {'yes' if causal else 'no'} | {s} | {n} | {why} | | | |")
                continue
            med = statistics.median(us)
            if n == names[0]:
                ratio, rng = "1", ""
            elif rs[n]:
                ratio = f"{statistics.median(rs[n]):.3f}"
                rng = f"{min(rs[n]):.3f}-{max(rs[n]):.3f}"
            else:
                ratio, rng = "", ""
            lines.append(f"| {d} | {'yes' if causal else 'no'} | {s} | {n} | {med:.1f} | "
                         f"{tflops(flops, med * 1e-3):.0f} | {ratio} | {rng} |")
    return "\n".join(lines)


def case_key(case):
    d, causal, s = case
    return f"{d}:{'yes' if causal else 'no'}:{s}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--variants", default=None, help="comma-separated folder names (default: all, base first)")
    ap.add_argument("--case", action="append", type=parse_case, required=True, help="D:CAUSAL:SEQLEN")
    ap.add_argument("--dtype", default="bf16", choices=("bf16", "fp16"))
    ap.add_argument("--backend", default="sm90", choices=("sm80", "sm90"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--cli-args", default="", help="words added to every variant's `flashcute bench`")
    ap.add_argument("--clock", default="base", choices=("base", "none"), help="ncu --clock-control")
    ap.add_argument("--ncu", default="ncu")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per ncu run")
    ap.add_argument("--json", default=None, help="write the per-round times here")
    ap.add_argument("--deadline", type=float, default=None,
                    help="seconds after which no further case is started (the report covers what ran)")
    a = ap.parse_args()
    names = a.variants.split(",") if a.variants else variants_in(a.bin_dir)
    binaries = {n: os.path.join(a.bin_dir, n, "flashcute") for n in names}
    for n, b in binaries.items():
        if not os.access(b, os.X_OK):
            sys.exit(f"ab_locked: no executable {b}")
    results = {case_key(c): [] for c in a.case}
    errors = []
    t0 = time.monotonic()
    for r in range(a.rounds):
        for case in a.case:
            if a.deadline is not None and time.monotonic() - t0 > a.deadline:
                errors.append(f"round {r} {case_key(case)}: not started (--deadline {a.deadline:g} s)")
                print(errors[-1], file=sys.stderr)
                continue
            rnd = {}
            for n in rotated(names, r):
                try:
                    rnd[n] = measure(binaries[n], case, a)
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    errors.append(f"round {r} {case_key(case)} {n}: {e}")
                    print(errors[-1], file=sys.stderr)
            results[case_key(case)].append(rnd)
            print(f"round {r} {case_key(case)}: " + ", ".join(f"{n} {us:.1f} us" for n, us in rnd.items()),
                  file=sys.stderr, flush=True)
    print(report(a, a.case, names, results))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"git": git_revision(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "clock": a.clock, "dtype": a.dtype, "iters": a.iters, "warmup": a.warmup,
                       "cli_args": a.cli_args, "variants": names, "times_us": results, "errors": errors}, f, indent=1)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
