#!/usr/bin/env python3
"""GPU time of flashcute and of a PyTorch SDPA backend (FlashAttention-2 by default, or cuDNN) per case,
measured by ncu at a fixed clock, so that the comparison is of work per clock, free of the power cap's
clock swings that move bench.py's ratios by several percent from run to run (its records carry the
clock each ran at).

    python3 bench/ncu_pairs.py --pass fwd,bwd --d 64,128 --seqlen 2048,4096,8192,16384 [--backend sm80]
    python3 bench/ncu_pairs.py --backend sm90 --peer sdpa_cudnn --dtype fp16 --d 64,128,256 \
        --seqlen 512,1024,2048,4096,8192,16384 --records ncu-fp16.json
    python3 bench/sm90_targets.py ncu-fp16.json --fa3-json PEERS_JSON   # issue 7's table at that clock
    python3 bench/ncu_pairs.py --backend sm90 --peer sdpa_cudnn --d 128 --seqlen 8192 --pipe
        # also each one's tensor-pipe share of its SMs' active cycles and its SMs' active share

Runs itself once under ncu (`--clock-control base`: the GPU's base clock, locked; `none` leaves
the clock to the GPU) with one profiler window over all cases. Both are bound and called as bench.py
does (its Impls: flashcute_sm80 / _sm90 and sdpa_flash / sdpa_cudnn). Every call of either is timed (every kernel
it launches, summed: our backward's preprocess and postprocess count, as does whatever SDPA launches
for FA2), `--calls` times per case, between marker kernels
(torch.cuda._sleep) that tell the cases and implementations apart. The backward's window holds the
backward only (the forward runs before it). bf16; batch = 16384 / seqlen and heads = 2048 / d as
in BENCHMARKING.md's grid. Prints a markdown table (mean microseconds per call, FA2 / ours).
"""

import argparse
import csv
import io
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

MARKER = "spin_kernel"  # torch.cuda._sleep's kernel
PEERS = {"sdpa_flash": "FA2", "sdpa_cudnn": "cuDNN"}


def cases(a):
    for which in a.passes.split(","):
        for d in (int(x) for x in a.d.split(",")):
            for causal in (False, True):
                for s in (int(x) for x in a.seqlen.split(",")):
                    yield which, d, causal, s


def inner(a):
    import torch

    import flashcute
    from bench import Impls
    from bench_grid import shape_for

    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[a.dtype]
    names = [f"flashcute_{a.backend}", a.peer]
    impls = Impls(torch, flashcute, names, no_flex=True)
    if impls.names != names:
        sys.exit(f"ncu_pairs: {'; '.join(impls.notes)}")
    torch.manual_seed(0)
    for which, d, causal, s in cases(a):
        b, h = shape_for(s, d)
        q, k, v = (torch.randn(b, s, h, d, device="cuda", dtype=dtype, requires_grad=True) for _ in range(3))
        dout = torch.randn(b, s, h, d, device="cuda", dtype=dtype)
        calls = []
        for name in names:  # bench.py's bindings, each called in its own context (the pinned path, SDPA's backend)
            prep = impls.prepare(name, q, k, v, dout, causal)
            with impls.context(name, which):
                if which == "fwd":
                    fn = prep.call
                else:  # the forward runs here, outside the window; the window holds the backward only
                    out = prep.call()
                    fn = lambda out=out, prep=prep: torch.autograd.grad(out, prep.leaves, prep.dout,  # noqa: E731
                                                                        retain_graph=True)
            calls.append((name, fn))
        for name, fn in calls:  # warm-up, outside the window
            with impls.context(name, which):
                for _ in range(2):
                    fn()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStart()
        for name, fn in calls:
            torch.cuda._sleep(1000)
            with impls.context(name, which):
                for _ in range(a.calls):
                    fn()
        torch.cuda._sleep(1000)
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()
        del q, k, v, dout, calls
        torch.cuda.empty_cache()


# --pipe: the tensor pipe's active share of the SM's active cycles, and the SMs' active share of the
# kernel's elapsed cycles (what a partial last wave or a tile's idle tail leaves).
PIPE_METRICS = ("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
                "sm__cycles_active.avg", "sm__cycles_elapsed.avg")


def kernel_rows(csv_text, metrics=()):
    """(kernel name, duration in us, {metric: value}) per profiled kernel, in launch order, from ncu's
    raw CSV page."""
    lines = [ln for ln in csv_text.splitlines() if ln.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    head = rows[0]
    name_i, t_i = head.index("Kernel Name"), head.index("gpu__time_duration.sum")
    m_i = {m: head.index(m) for m in metrics}
    body = rows[1:]
    unit = "nsecond"
    if body and not body[0][0].strip():  # the units row
        unit, body = body[0][t_i], body[1:]
    scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}[unit]

    def num(text):
        return float(text.replace(",", "")) if text.strip() not in ("", "n/a") else float("nan")

    return [(r[name_i], num(r[t_i]) * scale, {m: num(r[i]) for m, i in m_i.items()}) for r in body]


def kernel_times(csv_text):
    """(kernel name, duration in us) per profiled kernel, in launch order, from ncu's raw CSV page."""
    return [(name, us) for name, us, _ in kernel_rows(csv_text)]


def case_segments(a, items):
    """[(pass, d, causal, seqlen, ours' items, the peer's items)] per case, from (kernel name, item) pairs
    in launch order: the items of each implementation's kernels between the marker kernels."""
    # Segments between markers: for each case, ours then the peer; the trailing marker closes the case.
    segs, cur = [], None
    for name, item in items:
        if MARKER in name:
            if cur is not None:
                segs.append(cur)
            cur = []
        elif cur is not None:
            cur.append(item)
    out = []
    i = 0
    for which, d, causal, s in cases(a):
        ours, peer = segs[i] if i < len(segs) else [], segs[i + 1] if i + 1 < len(segs) else []
        i += 2  # the marker after the peer's calls opens the next case's ours segment (a closing one stays empty)
        if i < len(segs) and not segs[i]:
            i += 1
        out.append((which, d, causal, s, ours, peer))
    return out


def pairs(a, times):
    """[(pass, d, causal, seqlen, ours us, peer us)] per case: the mean GPU time per call of each."""
    return [(w, d, c, s, sum(o) / a.calls, sum(p) / a.calls) for w, d, c, s, o, p in case_segments(a, times)]


def pipe_shares(rows):
    """(tensor pipe active % of the SMs' active cycles, SMs' active % of the elapsed cycles) over one
    implementation's kernels of a case, each kernel weighted by its time; None without kernels."""
    total = sum(us for us, _ in rows)
    if total <= 0:
        return None
    hmma = sum(us * m[PIPE_METRICS[0]] for us, m in rows) / total
    active = sum(us * m[PIPE_METRICS[1]] / m[PIPE_METRICS[2]] for us, m in rows) / total * 100
    return hmma, active


def pipe_table(a, rows):
    """Markdown: per case, each implementation's time per call, tensor pipe and SM active shares."""
    peer = PEERS[getattr(a, "peer", "sdpa_flash")]
    out = [f"ncu --clock-control {a.clock}; {getattr(a, 'dtype', 'bf16')}; tensor pipe: "
           f"{PIPE_METRICS[0]}; SMs active: {PIPE_METRICS[1]} / {PIPE_METRICS[2]}; time-weighted over each "
           "implementation's kernels of the case", "",
           f"| pass | d | causal | seqlen | ours us | ours tensor pipe % | ours SMs active % | {peer} us | "
           f"{peer} tensor pipe % | {peer} SMs active % |", "|---|---|---|---|---|---|---|---|---|---|"]
    items = [(name, (us, m)) for name, us, m in rows]

    def cells(seg):
        sh = pipe_shares(seg)
        us = sum(u for u, _ in seg) / a.calls
        return [f"{us:.1f}", *(f"{x:.1f}" for x in sh)] if sh else ["n/a"] * 3

    for which, d, causal, s, ours, peer_rows in case_segments(a, items):
        out.append(f"| {which} | {d} | {'yes' if causal else 'no'} | {s} | " +
                   " | ".join(cells(ours) + cells(peer_rows)) + " |")
    return "\n".join(out)


def table(a, times):
    peer = PEERS[getattr(a, "peer", "sdpa_flash")]
    out = [f"ncu --clock-control {a.clock}; {getattr(a, 'dtype', 'bf16')}; mean GPU time per call of {a.calls} "
           "(every kernel of the call)", "",
           f"| pass | d | causal | seqlen | ours us | {peer} us | {peer} / ours |", "|---|---|---|---|---|---|---|"]
    for which, d, causal, s, to, tp in pairs(a, times):
        ratio = f"{tp / to:.3f}" if to > 0 and tp > 0 else "n/a"
        out.append(f"| {which} | {d} | {'yes' if causal else 'no'} | {s} | {to:.1f} | {tp:.1f} | {ratio} |")
    return "\n".join(out)


def records(a, times):
    """bench.py records (one per implementation and case with a time) of the forward cases: TFLOP/s from the
    mean GPU time per call, so bench/sm90_targets.py makes issue 7's table at ncu's clock."""
    from bench_grid import fwd_flops, git_revision, shape_for

    recs = []
    for which, d, causal, s, to, tp in pairs(a, times):
        if which != "fwd":
            continue
        b, h = shape_for(s, d)
        flops = fwd_flops(b, h, s, s, d, causal=causal)
        for impl, us in ((f"flashcute_{a.backend}", to), (a.peer, tp)):
            if us > 0:
                recs.append({"impl": impl, "pass": "fwd", "dtype": a.dtype, "d": d, "causal": causal, "seqlen": s,
                             "batch": b, "heads": h, "status": "ok", "tflops": flops / (us * 1e-6) / 1e12,
                             "time_us": us, "reps": a.calls})
    method = (f"ncu_pairs: ncu --clock-control {a.clock}, mean GPU time of {a.calls} calls per implementation "
              "(every kernel of the call), L2 flushed before each kernel (ncu's default)")
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    run = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "git": git_revision(repo), "method": method}
    return {"meta": {"runs": [run]}, "records": recs}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pass", dest="passes", default="fwd", help="fwd, bwd or fwd,bwd")
    ap.add_argument("--d", default="64,128")
    ap.add_argument("--seqlen", default="2048,4096,8192,16384")
    ap.add_argument("--backend", default="sm80", choices=("sm80", "sm90"), help="flashcute forward path")
    ap.add_argument("--peer", default="sdpa_flash", choices=tuple(PEERS), help="the SDPA backend beside ours")
    ap.add_argument("--dtype", default="bf16", choices=("bf16", "fp16"))
    ap.add_argument("--records", default=None, help="also write the forward cases as bench.py records (JSON) here")
    ap.add_argument("--calls", type=int, default=3, help="timed calls per implementation and case")
    ap.add_argument("--clock", default="base", choices=("base", "none"), help="ncu --clock-control")
    ap.add_argument("--ncu", default="ncu")
    ap.add_argument("--pipe", action="store_true",
                    help="also collect the tensor pipe's and the SMs' active shares and print their table")
    ap.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.inner:
        inner(a)
        return 0
    metrics = ",".join(("gpu__time_duration.sum",) + (PIPE_METRICS if a.pipe else ()))
    cmd = [a.ncu, "--profile-from-start", "off", "--clock-control", a.clock, "--metrics", metrics,
           "--csv", "--page", "raw", sys.executable, os.path.abspath(__file__), "--inner", "--pass", a.passes,
           "--d", a.d, "--seqlen", a.seqlen, "--backend", a.backend, "--peer", a.peer, "--dtype", a.dtype,
           "--calls", str(a.calls)]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        sys.stderr.write(run.stdout[-4000:] + run.stderr[-4000:])
        return run.returncode
    times = kernel_times(run.stdout)
    print(table(a, times))
    if a.pipe:
        print()
        print(pipe_table(a, kernel_rows(run.stdout, PIPE_METRICS)))
    if a.records:
        with open(a.records, "w") as f:
            json.dump(records(a, times), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
