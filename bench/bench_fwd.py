#!/usr/bin/env python3
"""Forward attention, flashcute side by side with its peers: same process, same random inputs.

Peers: PyTorch SDPA with the backend forced (FLASH_ATTENTION = FlashAttention-2, CUDNN_ATTENTION,
EFFICIENT_ATTENTION), and FlexAttention compiled (--flex). Grid of docs/BENCHMARKING.md: bf16 and
fp16; d 64, 128 (256 with --d256); seqlen 512..16k with batch = 16384 / seqlen and heads = 2048 / d;
causal and not. FLOPs = 4 * batch * heads * seqlen^2 * d, halved for causal.

Timing: CUDA events around each call after warm-up, the L2 cache flushed (a 256 MB memset) before
each call as triton.testing.do_bench does; the median is reported. Inputs are randn, layout
(batch, seqlen, heads, d); SDPA and FlexAttention get (batch, heads, seqlen, d) transposed views of
the same tensors (FlexAttention: contiguous copies, the layout it is written for).

Each row reports TFLOP/s per implementation, ours / best peer, ours / FA2, and on bf16 rows the
FA3 comparison of BENCHMARKING.md (FA3 is not installed here: ours/cuDNN against FA3/cuDNN from the
committed H100 table; >= 1 means ahead of FA3). A correctness spot check compares every result
with flashcute's (max |difference|). Output: <out>/bench_fwd.json (metadata + one record per
implementation x case) and <out>/bench_fwd.md (the table), the table also on stdout.

Run on the GPU machine after building the extension into a build tree, e.g.
    cmake --preset gpu && cmake --build --preset gpu -j      # FLASHCUTE_BUILD_PYTHON=ON
    PYTHONPATH=build/gpu/python python3 bench/bench_fwd.py --quick --out gpu-out/bench
(or after `pip install --no-build-isolation .`, with no PYTHONPATH). Exits 2 if flashcute (with its
compiled extension), torch or a CUDA device is missing.

A crash prints the Python stack (faulthandler is on) and the native one (FLASHCUTE_NATIVE_BACKTRACE
defaults to 1 here; resolve _C*.so(+0x...) offsets with addr2line -fCe). --trace (or FLASHCUTE_TRACE=1,
which also makes flashcute._C trace every call) prints one timestamped stderr line per phase, so a
log that ends in a crash says how far the run got.
"""

import argparse
import datetime
import faulthandler
import glob
import json
import os
import platform
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKENS, HIDDEN = 16384, 2048
SEQLENS = (512, 1024, 2048, 4096, 8192, 16384)
PEERS = ("sdpa_flash", "sdpa_cudnn", "sdpa_efficient", "flex")
LABELS = {
    "flashcute": "flashcute",
    "flashcute_ops": "flashcute (ops)",
    "sdpa_flash": "FA2 (SDPA)",
    "sdpa_cudnn": "cuDNN (SDPA)",
    "sdpa_efficient": "mem-eff (SDPA)",
    "flex": "FlexAttention",
}


T0 = time.time()
_TRACE = [os.environ.get("FLASHCUTE_TRACE", "0") not in ("", "0")]


def phase(msg):
    """One flushed stderr line per phase under --trace / FLASHCUTE_TRACE=1."""
    if _TRACE[0]:
        print(f"bench_fwd: [{time.time() - T0:7.2f} s] {msg}", file=sys.stderr, flush=True)


def fail(msg):
    print(f"bench_fwd: {msg}", file=sys.stderr)
    sys.exit(2)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="bf16, d 64 and 128, seqlen 2k and 8k, causal and not")
    p.add_argument("--out", default=None, help="directory for bench_fwd.json and bench_fwd.md")
    p.add_argument("--dtypes", default="bf16,fp16")
    p.add_argument("--head-dims", default="64,128")
    p.add_argument("--d256", action="store_true", help="add d = 256 to the grid")
    p.add_argument("--seqlens", default=",".join(map(str, SEQLENS)))
    p.add_argument("--causal", choices=("both", "true", "false"), default="both")
    p.add_argument("--impls", default="flashcute,sdpa_flash,sdpa_cudnn,sdpa_efficient",
                   help="comma list of: " + ", ".join(LABELS))
    p.add_argument("--flex", action="store_true", help="also FlexAttention (torch.compile; slower to start)")
    p.add_argument("--backend", default="auto", choices=("auto", "sm80", "sm90"), help="flashcute's compiled path")
    p.add_argument("--warmup-ms", type=float, default=25.0)
    p.add_argument("--rep-ms", type=float, default=100.0)
    p.add_argument("--no-flush", action="store_true", help="do not flush L2 between timed calls")
    p.add_argument("--fa3-json", default=None, help="FA3/cuDNN/FA2 H100 table (default: shared/docs/...)")
    p.add_argument("--strict", action="store_true", help="exit 1 when a spot check exceeds its tolerance")
    p.add_argument("--trace", action="store_true", help="one timestamped stderr line per phase (see the doc)")
    a = p.parse_args()
    if a.quick:
        a.dtypes, a.head_dims, a.seqlens, a.causal = "bf16", "64,128", "2048,8192", "both"
    impls = [s for s in a.impls.split(",") if s]
    if a.flex and "flex" not in impls:
        impls.append("flex")
    for s in impls:
        if s not in LABELS:
            p.error(f"--impls: unknown implementation '{s}' (known: {', '.join(LABELS)})")
    if "flashcute" not in impls:
        impls.insert(0, "flashcute")
    a.impl_list = impls
    a.head_dim_list = [int(x) for x in a.head_dims.split(",") if x] + ([256] if a.d256 else [])
    a.seqlen_list = [int(x) for x in a.seqlens.split(",") if x]
    a.dtype_list = [x for x in a.dtypes.split(",") if x]
    a.causal_list = {"both": [False, True], "true": [True], "false": [False]}[a.causal]
    return a


def import_flashcute():
    try:
        import flashcute
    except ImportError as exc:
        fail(f"cannot import flashcute ({exc}); {build_hint()}")
    if not flashcute.extension_available():
        fail(f"flashcute's compiled extension is not importable ({flashcute._ext.IMPORT_ERROR}); {build_hint()}")
    return flashcute


def build_hint():
    built = sorted(glob.glob(os.path.join(REPO, "build", "*", "python", "flashcute", "_C*.so")))
    where = "; built modules found in: " + ", ".join(os.path.dirname(os.path.dirname(b)) for b in built) if built else ""
    return ("build it (cmake --preset gpu && cmake --build --preset gpu -j) and run with "
            f"PYTHONPATH=build/gpu/python, or pip install --no-build-isolation .{where}")


# ---- environment -----------------------------------------------------------------------------------
def gpu_meta(torch, flashcute):
    dev = torch.cuda.current_device()
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "device": torch.cuda.get_device_name(dev),
        "capability": ".".join(map(str, torch.cuda.get_device_capability(dev))),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "python": platform.python_version(),
        "flashcute": flashcute.__version__,
        "flashcute_build": flashcute.build_config(),
    }
    try:
        q = "name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu"
        line = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader", "-i", str(dev)],
                              capture_output=True, text=True, timeout=20).stdout.strip().splitlines()[0]
        keys = ("nvsmi_name", "driver", "clock_sm", "clock_sm_max", "clock_mem", "power", "temperature")
        meta.update(dict(zip(keys, (x.strip() for x in line.split(",")))))
    except Exception as exc:  # nvidia-smi missing or refusing: the bench still runs
        meta["nvidia_smi"] = f"unavailable ({exc})"
    try:
        meta["git"] = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                                     text=True, timeout=10).stdout.strip() or None
    except Exception:
        meta["git"] = None
    return meta


def load_fa3(path):
    """{(d, causal, seqlen): fa3/cudnn} from the committed H100 peer table (forward, bf16)."""
    candidates = [path] if path else [os.path.join(REPO, "shared", "docs", "h100_peers_fa3_cudnn_fa2.json"),
                                      os.path.join(REPO, "..", "shared", "docs", "h100_peers_fa3_cudnn_fa2.json")]
    for c in candidates:
        if c and os.path.isfile(c):
            with open(c) as f:
                table = json.load(f)
            ratios = {}
            for r in table.get("rows", []):
                fwd = r.get("fwd", {})
                if fwd.get("fa3") and fwd.get("cudnn"):
                    ratios[(r["d"], bool(r["causal"]), r["seqlen"])] = fwd["fa3"] / fwd["cudnn"]
            return ratios, os.path.relpath(c, REPO)
    return {}, None


# ---- timing ------------------------------------------------------------------------------------------
class Timer:
    def __init__(self, torch, warmup_ms, rep_ms, flush):
        self.torch = torch
        self.warmup_ms, self.rep_ms = warmup_ms, rep_ms
        self.cache = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda") if flush else None

    def median_ms(self, fn):
        torch = self.torch
        fn()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(5):
            fn()
        end.record()
        torch.cuda.synchronize()
        est = max(start.elapsed_time(end) / 5, 1e-3)
        for _ in range(max(1, int(self.warmup_ms / est))):
            fn()
        n = max(10, min(1000, int(self.rep_ms / est)))
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        for i in range(n):
            if self.cache is not None:
                self.cache.zero_()  # cold L2; also keeps the GPU busy while the CPU enqueues the call
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


# ---- implementations -----------------------------------------------------------------------------------
def make_impls(torch, flashcute, names, q, k, v, causal, backend):
    """name -> (callable returning out (b, s, h, d), context manager factory)."""
    import contextlib

    from torch.nn.attention import SDPBackend, sdpa_kernel

    sdpa = torch.nn.functional.scaled_dot_product_attention
    qt, kt, vt = (t.transpose(1, 2) for t in (q, k, v))  # (b, h, s, d) views of the same memory
    impls = {}
    for name in names:
        if name == "flashcute":
            impls[name] = (lambda: flashcute.flash_attn_func(q, k, v, causal=causal),
                           lambda: flashcute.use_backend(backend))
        elif name == "flashcute_ops":
            out = torch.empty_like(q)
            stream = torch.cuda.current_stream().cuda_stream

            def call(out=out, stream=stream):
                flashcute.ops.fwd(q, k, v, out, causal=causal, stream=stream, backend=backend)
                return out

            impls[name] = (call, contextlib.nullcontext)
        elif name.startswith("sdpa_"):
            backend_enum = {"sdpa_flash": SDPBackend.FLASH_ATTENTION, "sdpa_cudnn": SDPBackend.CUDNN_ATTENTION,
                            "sdpa_efficient": SDPBackend.EFFICIENT_ATTENTION}[name]
            impls[name] = (lambda: sdpa(qt, kt, vt, is_causal=causal).transpose(1, 2),
                           lambda b=backend_enum: sdpa_kernel(b))
        elif name == "flex":
            impls[name] = (make_flex(torch, q, k, v, causal), contextlib.nullcontext)
    return impls


_flex_cache = {}


def make_flex(torch, q, k, v, causal):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    if "fn" not in _flex_cache:
        # One compiled kernel per shape of the grid: raise dynamo's recompile limit (8 by default),
        # past which it would silently fall back to the slow eager FlexAttention.
        for knob in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit",
                     "accumulated_cache_size_limit"):
            if hasattr(torch._dynamo.config, knob):
                setattr(torch._dynamo.config, knob, 1024)
        _flex_cache["fn"] = torch.compile(flex_attention, dynamic=False)
    flex = _flex_cache["fn"]
    qc, kc, vc = (t.transpose(1, 2).contiguous() for t in (q, k, v))
    mask = None
    if causal:
        sq, sk = q.shape[1], k.shape[1]
        mask = create_block_mask(lambda b, h, i, j: i + (sk - sq) >= j, None, None, sq, sk, device=q.device)
    return lambda: flex(qc, kc, vc, block_mask=mask).transpose(1, 2)


# ---- the run ------------------------------------------------------------------------------------------
def main():
    # A native crash prints the Python stack (faulthandler) and, from flashcute._C, the native one
    # (FLASHCUTE_NATIVE_BACKTRACE, read when the extension is imported): never an empty log again.
    faulthandler.enable()
    os.environ.setdefault("FLASHCUTE_NATIVE_BACKTRACE", "1")
    args = parse_args()
    _TRACE[0] = _TRACE[0] or args.trace
    phase("importing flashcute")
    flashcute = import_flashcute()
    phase(f"imported flashcute {flashcute.__version__} from {os.path.dirname(flashcute._C.__file__)}; importing torch")
    try:
        import torch
    except ImportError as exc:
        fail(f"torch is required for the peers ({exc})")
    phase(f"imported torch {torch.__version__}; initializing CUDA")
    if not torch.cuda.is_available():
        fail("no CUDA device")
    dtypes = {"bf16": torch.bfloat16, "fp16": torch.float16}
    for d in args.dtype_list:
        if d not in dtypes:
            fail(f"--dtypes: unknown dtype '{d}' (bf16, fp16)")

    phase("CUDA available; collecting the environment (device, cuDNN, nvidia-smi, git)")
    meta = gpu_meta(torch, flashcute)
    fa3, fa3_src = load_fa3(args.fa3_json)
    meta.update(grid={"dtypes": args.dtype_list, "head_dims": args.head_dim_list, "seqlens": args.seqlen_list,
                      "causal": args.causal_list, "impls": args.impl_list, "backend": args.backend},
                method=f"CUDA events per call, median; warm-up {args.warmup_ms} ms, {args.rep_ms} ms of reps; "
                       f"L2 flush {'off' if args.no_flush else 'on (256 MB memset)'}",
                fa3_table=fa3_src)
    print(f"bench_fwd: {meta['device']} (driver {meta.get('driver')}, SM clock {meta.get('clock_sm')}), "
          f"torch {meta['torch']}, cuDNN {meta['cudnn']}, flashcute {meta['flashcute']} [{meta['flashcute_build']}]",
          file=sys.stderr)

    timer = Timer(torch, args.warmup_ms, args.rep_ms, flush=not args.no_flush)
    records, rows, suspect = [], [], []
    cases = [(dt, d, causal, s) for dt in args.dtype_list for d in args.head_dim_list for causal in args.causal_list
             for s in args.seqlen_list]
    t_start = time.time()
    for n_case, (dt, d, causal, seqlen) in enumerate(cases, 1):
        batch, heads = TOKENS // seqlen, HIDDEN // d
        flops = 4 * batch * heads * seqlen * seqlen * d // (2 if causal else 1)
        torch.manual_seed(0)
        q, k, v = (torch.randn(batch, seqlen, heads, d, device="cuda", dtype=dtypes[dt]) for _ in range(3))
        case = dict(dtype=dt, d=d, causal=causal, seqlen=seqlen, batch=batch, heads=heads, flops=flops)
        outs, row = {}, dict(case, tflops={}, errors={})
        with torch.no_grad():
            impls = make_impls(torch, flashcute, args.impl_list, q, k, v, causal, args.backend)
            for name, (fn, ctx) in impls.items():
                rec = dict(case, impl=name)
                phase(f"case {n_case}/{len(cases)} {dt} d{d} causal={causal} s{seqlen}: {name}")
                try:
                    with ctx():
                        torch.cuda.synchronize()
                        torch.cuda.reset_peak_memory_stats()
                        before = torch.cuda.memory_allocated()
                        out = fn()  # also the first call: cuDNN plans, lazy module loading
                        torch.cuda.synchronize()
                        rec["peak_mem_bytes"] = torch.cuda.max_memory_allocated() - before  # above the inputs
                        outs[name] = out.float()
                        del out
                        ms = timer.median_ms(fn)
                    rec.update(ms=ms, tflops=flops / (ms * 1e-3) / 1e12)
                    row["tflops"][name] = rec["tflops"]
                except Exception as exc:  # a peer that does not support the case is recorded, not fatal
                    rec["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
                    row["errors"][name] = rec["error"]
                    if name.startswith("flashcute"):
                        print(f"bench_fwd: flashcute failed on {case}: {rec['error']}", file=sys.stderr)
                records.append(rec)
        # spot check: every result against flashcute's
        ref = outs.get("flashcute")
        tol = 2e-2 if dt == "bf16" else 4e-3
        row["max_diff"] = {}
        for name, o in outs.items():
            if ref is None or name == "flashcute":
                continue
            diff = (o - ref).abs().max().item()
            row["max_diff"][name] = diff
            next(r for r in reversed(records) if r["impl"] == name)["max_abs_diff_vs_flashcute"] = diff
            if not diff <= tol:
                suspect.append(f"{dt} d{d} causal={causal} s{seqlen}: |{name} - flashcute| = {diff:.3g} > {tol}")
        del outs, ref, q, k, v
        summarize(row, fa3)
        rows.append(row)
        ours = row["tflops"].get("flashcute")
        print(f"[{n_case}/{len(cases)} {time.time() - t_start:5.0f}s] {dt} d{d} {'causal' if causal else 'full  '} "
              f"s{seqlen:<5} " + " ".join(f"{LABELS[n]}={t:.0f}" for n, t in row["tflops"].items())
              + (f"  ours/best={row['vs_best']:.2f}" if ours and row.get("vs_best") else ""), file=sys.stderr)

    table = markdown(rows, meta, args.impl_list, fa3)
    print(table)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "bench_fwd.json"), "w") as f:
            json.dump({"meta": meta, "records": records, "suspect": suspect}, f, indent=1)
        with open(os.path.join(args.out, "bench_fwd.md"), "w") as f:
            f.write(table + "\n")
        print(f"bench_fwd: wrote {args.out}/bench_fwd.json and bench_fwd.md", file=sys.stderr)
    for s in suspect:
        print(f"bench_fwd: SPOT CHECK: {s}", file=sys.stderr)
    if any("flashcute" in r["errors"] for r in rows):
        return 1
    return 1 if (suspect and args.strict) else 0


def summarize(row, fa3):
    t = row["tflops"]
    ours = t.get("flashcute")
    peers = {n: v for n, v in t.items() if n in PEERS}
    row["best_peer"] = max(peers, key=peers.get) if peers else None
    row["vs_best"] = ours / peers[row["best_peer"]] if ours and peers else None
    row["vs_fa2"] = ours / t["sdpa_flash"] if ours and t.get("sdpa_flash") else None
    ratio = fa3.get((row["d"], row["causal"], row["seqlen"])) if row["dtype"] == "bf16" else None
    row["vs_fa3_est"] = (ours / t["sdpa_cudnn"]) / ratio if ours and t.get("sdpa_cudnn") and ratio else None


def markdown(rows, meta, impls, fa3):
    fmt = lambda x, p=0: "–" if x is None else f"{x:.{p}f}"  # noqa: E731
    lines = [
        f"Forward TFLOP/s on {meta['device']} (driver {meta.get('driver', '?')}, SM clock {meta.get('clock_sm', '?')} "
        f"of max {meta.get('clock_sm_max', '?')}), torch {meta['torch']}, cuDNN {meta['cudnn']}, "
        f"flashcute {meta['flashcute']} ({meta['flashcute_build']}), {meta['date']}, git {meta.get('git')}.",
        f"{meta['method']}. batch = {TOKENS}/seqlen, heads = {HIDDEN}/d; causal FLOPs halved.",
        "",
    ]
    head = ["dtype", "d", "causal", "seqlen", "batch x heads"] + [LABELS[n] for n in impls]
    head += ["ours / best peer", "ours / FA2"] + (["ours vs FA3 (est.)"] if fa3 else []) + ["max abs diff"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["dtype"], str(r["d"]), "yes" if r["causal"] else "no", str(r["seqlen"]), f"{r['batch']}x{r['heads']}"]
        cells += ["err" if n in r["errors"] else fmt(r["tflops"].get(n)) for n in impls]
        best = f"{fmt(r['vs_best'], 2)} ({LABELS[r['best_peer']]})" if r["vs_best"] else "–"
        cells += [best, fmt(r["vs_fa2"], 2)] + ([fmt(r["vs_fa3_est"], 2)] if fa3 else [])
        cells.append(f"{max(r['max_diff'].values()):.1e}" if r["max_diff"] else "–")
        lines.append("| " + " | ".join(cells) + " |")
    notes = [n for r in rows for n in (f"{r['dtype']} d{r['d']} s{r['seqlen']} {k}: {e}" for k, e in r["errors"].items())]
    if fa3:
        lines += ["", "ours vs FA3 (est.) = (ours / cuDNN here) / (FA3 / cuDNN on the committed H100 table); "
                      ">= 1 means ahead of FA3 (bf16 rows only)."]
    if notes:
        lines += ["", "Errors:"] + [f"- {n}" for n in notes]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
