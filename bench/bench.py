#!/usr/bin/env python3
"""flashcute side by side with every attention implementation in this process: same inputs, same run.

Grid (docs/BENCHMARKING.md): bf16, fp16; d 64, 128, 256; seqlen 512 .. 16k with batch = 16384/seqlen
and heads = 2048/d; causal and not; passes fwd, bwd, fwd+bwd. Implementations:
  flashcute_sm80, flashcute_sm90  flashcute.flash_attn_func with the path pinned (use_backend). SM90
                                  only where the build has 90a and the GPU is cc 9.0; it has a forward
                                  only, so its bwd / fwd+bwd run the "auto" path (SM90 forward, SM80
                                  backward), and only on cases whose SM90 forward runs
  sdpa_flash, sdpa_cudnn,         torch SDPA with the backend forced (FLASH_ATTENTION = FlashAttention-2,
  sdpa_efficient, sdpa_math       CUDNN_ATTENTION, EFFICIENT_ATTENTION, MATH = unfused; MATH capped by
                                  --math-max-seqlen, and out-of-memory is recorded as "oom")
  flex                            torch.compile'd FlexAttention (causal block mask where causal); one
                                  compile per shape and grad mode: slow to start; --no-flex drops it
  flash_attn, fa3                 the flash_attn package (FA2) / FA3's flash_attn_interface, if installed

Inputs: randn q, k, v, dout in (batch, seqlen, heads, d); SDPA gets (batch, heads, seqlen, d) views of the
same memory, FlexAttention contiguous (batch, heads, seqlen, d) copies. Timing: CUDA events around each
call, L2 flushed before each (a 256 MB memset, as triton's do_bench), a short GPU sleep first so the CPU
can run ahead; `--warmup` calls, then reps for about --rep-ms (between --min-reps and --max-reps); the
median is reported. bwd = torch.autograd.grad on a retained forward graph; fwd+bwd = forward then grad.
Implementations are timed in --rounds interleaved rounds (each once per round; order rotated, and
reversed in odd rounds) and the median of all timed calls is reported: on the H100 here these kernels
reach the 700 W power limit and the SM clock moves between ~1500 and 1980 MHz, so one-after-the-other
timing lets clock drift set the ratios. Every timed segment starts after the same ~20 ms GEMM load
(--condition-ms), so no implementation inherits the power state another one left.
Peak memory: a separate call before the timing; max_memory_allocated during it minus what was allocated
before it (so q, k, v, dout and, for bwd, the forward's saved tensors are excluded). Spot check: each
implementation's output (fwd) or dq, dk, dv (bwd, fwd+bwd) against a reference implementation on the same
inputs (sdpa_flash when it runs the case, else the first that does): max |diff| / max |reference|.

Output under --out: results.json (environment + one record per implementation x case x pass; rewritten
after every case, so an interrupted run keeps what it measured), results.md (one table per dtype x pass)
and PNG plots (bench_plots.py; `bench.py --merge a.json b.json --out DIR` joins chunks of the grid).
Exits 2 when flashcute's extension, torch or a GPU is missing, 1 when a flashcute measurement failed.

    PYTHONPATH=build/gpu/python python3 bench/bench.py --quick --out gpu-out/bench
    python3 bench/bench.py --dry-run --dtype bf16          # the cases and the expected time, no GPU
"""

import argparse
import contextlib
import datetime
import faulthandler
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import bench_grid as grid  # noqa: E402
import bench_report as report  # noqa: E402

ALL_IMPLS = report.OURS + report.PEERS
T0 = time.time()


def log(msg):
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def fail(msg):
    log(msg)
    sys.exit(2)


# ---- command line ---------------------------------------------------------------------------------------
def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="bf16, d 64 and 128, seqlen 2k and 8k, causal and not, "
                   "all passes, no FlexAttention (under 3 minutes on an H100)")
    p.add_argument("--dtype", default="bf16,fp16", help="comma list of bf16, fp16")
    p.add_argument("--d", default="64,128,256", help="comma list of head dims")
    p.add_argument("--seqlen", default=",".join(map(str, grid.SEQLENS)), help="comma list of sequence lengths")
    p.add_argument("--causal", default="both", help="both, true or false")
    p.add_argument("--pass", dest="passes", default="fwd,bwd,fwd+bwd", help="comma list of fwd, bwd, fwd+bwd")
    p.add_argument("--impl", default="all", help="comma list of: all, " + ", ".join(ALL_IMPLS)
                   + " (unavailable ones are dropped with a note; flashcute_sm80 is always run)")
    p.add_argument("--no-flex", action="store_true", help="leave FlexAttention out (compiles per shape)")
    p.add_argument("--flex", action="store_true", help="keep FlexAttention in with --quick")
    p.add_argument("--flex-warm-procs", type=int, default=8,
                   help="compile FlexAttention for every case in this many parallel processes before the timing "
                   "starts (they fill torch's compile caches, which the timed process then hits; 0 = compile in turn)")
    p.add_argument("--flex-warm-worker", default=None, help=argparse.SUPPRESS)  # "K/N": one warm-up worker
    p.add_argument("--math-max-seqlen", type=int, default=4096, help="MATH (unfused) only up to this seqlen")
    p.add_argument("--warmup", type=int, default=3, help="untimed calls before the timed ones")
    p.add_argument("--rep-ms", type=float, default=100.0, help="aim for this much timed GPU time per measurement")
    p.add_argument("--min-reps", type=int, default=5)
    p.add_argument("--max-reps", type=int, default=30)
    p.add_argument("--no-flush", action="store_true", help="do not flush L2 between timed calls")
    p.add_argument("--no-clock-samples", action="store_true",
                   help="do not sample the SM clock and power (NVML, a host thread) during timed segments")
    p.add_argument("--condition-ms", type=float, default=20.0,
                   help="before every timed segment, this much of a fixed bf16 GEMM load, so every implementation "
                   "starts from the same power state (0 = off)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved timing rounds per pass (every implementation "
                   "once per round, rotated order); the reported time is the median over all rounds' calls")
    p.add_argument("--max-seconds", type=float, default=420.0,
                   help="stop starting measurements after this many seconds and write what was measured (0 = none)")
    p.add_argument("--out", default=None, help="directory for results.json, results.md and the plots")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--fa3-json", default="auto", help="h100_peers_fa3_cudnn_fa2.json for the FA3 columns (stored, "
                   "not measured here); auto = look in shared/docs; none = no FA3 columns")
    p.add_argument("--merge", nargs="+", metavar="RESULTS_JSON", help="join results.json files of earlier runs "
                   "(chunks of the grid) into one results.json/md and plots under --out; runs nothing")
    p.add_argument("--dry-run", action="store_true", help="list the cases and the expected time; needs no GPU")
    p.add_argument("--strict", action="store_true", help="exit 1 when a spot check is flagged")
    a = p.parse_args(argv)
    try:
        if a.quick:
            a.dtypes, a.head_dims, a.seqlens = list(grid.QUICK["dtypes"]), list(grid.QUICK["head_dims"]), \
                list(grid.QUICK["seqlens"])
            a.causals, a.pass_list = list(grid.QUICK["causal"]), list(grid.QUICK["passes"])
            a.no_flex = a.no_flex or not a.flex
        else:
            a.dtypes = grid.parse_list(a.dtype, str, grid.DTYPES)
            a.head_dims = grid.parse_list(a.d, int)
            a.seqlens = grid.parse_list(a.seqlen, int)
            a.causals = grid.parse_causal(a.causal)
            a.pass_list = grid.parse_passes(a.passes)
        a.impls = resolve_impl_names(a.impl, a.no_flex)
        grid.make_cases(a.dtypes, a.head_dims, a.seqlens, a.causals)  # checks divisibility
    except ValueError as exc:
        p.error(str(exc))
    return a


def resolve_impl_names(text, no_flex):
    names = []
    for n in grid.parse_list(text, str):
        if n == "all":
            names += [x for x in ALL_IMPLS if x not in names]
        elif n not in ALL_IMPLS:
            raise ValueError(f"--impl: '{n}' is not one of all, {', '.join(ALL_IMPLS)}")
        elif n not in names:
            names.append(n)
    if no_flex:
        names = [n for n in names if n != "flex"]
    if "flashcute_sm80" not in names:
        names.insert(0, "flashcute_sm80")
    return names


# ---- environment ----------------------------------------------------------------------------------------
def gpu_clocks(index):
    """Driver, SM clock (now and max), memory clock, power and temperature via pynvml, else nvidia-smi."""
    try:
        import pynvml

        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(index)
        drv = pynvml.nvmlSystemGetDriverVersion()
        out = {"driver": drv.decode() if isinstance(drv, bytes) else drv,
               "clock_sm": f"{pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)} MHz",
               "clock_sm_max": f"{pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM)} MHz",
               "clock_mem": f"{pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_MEM)} MHz",
               "power_w": round(pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0, 1),
               "temperature_c": pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU)}
        pynvml.nvmlShutdown()
        return out
    except Exception as exc:  # pynvml missing or refusing: try nvidia-smi
        nvml_error = f"{type(exc).__name__}: {exc}"
    try:
        q = "driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu"
        line = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader", "-i", str(index)],
                              capture_output=True, text=True, timeout=20).stdout.strip().splitlines()[0]
        keys = ("driver", "clock_sm", "clock_sm_max", "clock_mem", "power_w", "temperature_c")
        return dict(zip(keys, (x.strip() for x in line.split(","))))
    except Exception as exc:
        return {"clocks": f"unavailable (pynvml: {nvml_error}; nvidia-smi: {exc})"}


def environment(torch, flashcute, args, argv):
    dev = torch.cuda.current_device()
    clocks = gpu_clocks(dev)
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "device": torch.cuda.get_device_name(dev),
        "capability": ".".join(map(str, torch.cuda.get_device_capability(dev))),
        "sm_count": torch.cuda.get_device_properties(dev).multi_processor_count,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "python": platform.python_version(),
        "flashcute": flashcute.__version__,
        "flashcute_build": flashcute.build_config(),
        "driver": clocks.pop("driver", None),
        "clock_sm_before": clocks.pop("clock_sm", None),
        **clocks,
        "argv": " ".join(argv),
        "method": (f"CUDA events per call, median over {args.rounds} interleaved rounds (every implementation once "
                   f"per round, order rotated and reversed in odd rounds); per round {args.warmup if args.rounds <= 1 else '1 (first round: ' + str(args.warmup) + ')'} "
                   f"warm-up calls and ~{args.rep_ms / max(1, args.rounds):.0f} ms of reps ({args.min_reps}-{args.max_reps}); "
                   f"L2 flush {'off' if args.no_flush else 'on'}; {args.condition_ms:g} ms of a fixed GEMM load before every timed segment; "
                   "peak memory above the inputs in a separate call"
                   + ("" if args.no_clock_samples else "; SM clock and power sampled through NVML every 2 ms of each "
                      "timed segment (sm_clock_mhz, power_w: medians over rounds, where NVML answers; "
                      "power_cap_frac, thermal_frac: the fraction of samples with NVML's SW power cap, or a "
                      "thermal or hardware slowdown, as clock-event reason, where NVML gives reasons)")),
    }
    meta["git"] = grid.git_revision(REPO)
    return meta


def find_fa3_json(arg):
    if arg == "none":
        return None
    if arg != "auto":
        if not os.path.isfile(arg):
            fail(f"--fa3-json {arg}: no such file")
        return arg
    for c in (os.path.join(REPO, "shared", "docs", "h100_peers_fa3_cudnn_fa2.json"),
              os.path.join(REPO, "..", "shared", "docs", "h100_peers_fa3_cudnn_fa2.json")):
        if os.path.isfile(c):
            return c
    return None


# ---- implementations --------------------------------------------------------------------------------------
class Prepared:
    """One implementation bound to one case's inputs.

    leaves: the tensors gradients are taken for; call(): the output in the implementation's own layout;
    dout: the output gradient in that layout; out_bshd / grad_bshd: (batch, seqlen, heads, d) views of
    an output / a gradient of a leaf, for the spot check."""

    def __init__(self, leaves, call, dout, out_bshd=None, grad_bshd=None):
        same = lambda t: t  # noqa: E731
        self.leaves, self.call, self.dout = leaves, call, dout
        self.out_bshd, self.grad_bshd = out_bshd or same, grad_bshd or same


class Impls:
    def __init__(self, torch, flashcute, names, no_flex):
        self.torch, self.fc = torch, flashcute
        self.notes, self.sm90_probe, self.flex_fn, self.block_masks = [], {}, None, {}
        self.names = [n for n in names if self._available(n, no_flex)]

    def _available(self, name, no_flex):
        torch = self.torch
        if name == "flashcute_sm90":
            archs = self.fc.build_config().split("archs=")[-1].split()[0] if "archs=" in self.fc.build_config() else ""
            cc = torch.cuda.get_device_capability()
            if "90" not in archs or cc != (9, 0):
                self.notes.append(f"flashcute_sm90 left out: build archs '{archs}', device cc {cc[0]}.{cc[1]}")
                return False
        elif name.startswith("sdpa_"):
            try:
                from torch.nn.attention import SDPBackend

                getattr(SDPBackend, self._sdpa_backend_name(name))
            except (ImportError, AttributeError) as exc:
                self.notes.append(f"{name} left out: {exc}")
                return False
        elif name == "flex":
            if no_flex:
                return False
            if importlib.util.find_spec("torch.nn.attention.flex_attention") is None:
                self.notes.append("flex left out: torch has no flex_attention")
                return False
        elif name in ("flash_attn", "fa3"):
            module = "flash_attn" if name == "flash_attn" else "flash_attn_interface"
            if importlib.util.find_spec(module) is None:
                self.notes.append(f"{name} left out: {module} is not installed")
                return False
        return True

    @staticmethod
    def _sdpa_backend_name(name):
        return {"sdpa_flash": "FLASH_ATTENTION", "sdpa_cudnn": "CUDNN_ATTENTION",
                "sdpa_efficient": "EFFICIENT_ATTENTION", "sdpa_math": "MATH"}[name]

    def context(self, name, pass_name):
        """The context every call of `name` runs in (the pinned flashcute path, the forced SDPA backend)."""
        if name == "flashcute_sm80":
            return self.fc.use_backend("sm80")
        if name == "flashcute_sm90":
            # The SM90 path has a forward only: with gradients, "auto" = SM90 forward + SM80 backward.
            return self.fc.use_backend("sm90" if pass_name == "fwd" else "auto")
        if name.startswith("sdpa_"):
            from torch.nn.attention import SDPBackend, sdpa_kernel

            return sdpa_kernel(getattr(SDPBackend, self._sdpa_backend_name(name)))
        return contextlib.nullcontext()

    def sm90_forward_runs(self, dtype, d):
        """(ok, reason): whether the SM90 forward accepts this (dtype, d), from a tiny forced-SM90 call."""
        key = (dtype, d)
        if key not in self.sm90_probe:
            torch = self.torch
            x = torch.randn(1, 128, 1, d, device="cuda", dtype=dtype)
            try:
                with self.fc.use_backend("sm90"):
                    self.fc.flash_attn_func(x, x, x)
                torch.cuda.synchronize()
                self.sm90_probe[key] = (True, None)
            except (NotImplementedError, RuntimeError, ValueError) as exc:
                self.sm90_probe[key] = (False, short(exc))
        return self.sm90_probe[key]

    def prepare(self, name, q, k, v, dout, causal):
        torch = self.torch
        leaves = (q, k, v)
        if name.startswith("flashcute"):
            return Prepared(leaves, lambda: self.fc.flash_attn_func(q, k, v, causal=causal), dout)
        if name.startswith("sdpa_"):
            sdpa = torch.nn.functional.scaled_dot_product_attention
            return Prepared(leaves, lambda: sdpa(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                 is_causal=causal),
                            dout.transpose(1, 2), out_bshd=lambda t: t.transpose(1, 2))
        if name == "flash_attn":
            from flash_attn import flash_attn_func

            return Prepared(leaves, lambda: flash_attn_func(q, k, v, causal=causal), dout)
        if name == "fa3":
            from flash_attn_interface import flash_attn_func as fa3_func

            def call():
                out = fa3_func(q, k, v, causal=causal)
                return out[0] if isinstance(out, tuple) else out

            return Prepared(leaves, call, dout)
        if name == "flex":
            fn = self._flex()
            qc, kc, vc = (t.detach().transpose(1, 2).contiguous().requires_grad_() for t in (q, k, v))
            mask = self._block_mask(q.shape[1], k.shape[1]) if causal else None
            return Prepared((qc, kc, vc), lambda: fn(qc, kc, vc, block_mask=mask),
                            dout.transpose(1, 2).contiguous(), out_bshd=lambda t: t.transpose(1, 2),
                            grad_bshd=lambda t: t.transpose(1, 2))
        raise ValueError(f"unknown implementation '{name}'")

    def _flex(self):
        if self.flex_fn is None:
            torch = self.torch
            from torch.nn.attention.flex_attention import flex_attention

            # One compiled graph per shape and grad mode: past dynamo's default recompile limit (8) it
            # would fall back to eager FlexAttention, which is slow and memory-hungry.
            for knob in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit",
                         "accumulated_cache_size_limit"):
                if hasattr(torch._dynamo.config, knob):
                    setattr(torch._dynamo.config, knob, 4096)
            self.flex_fn = torch.compile(flex_attention, dynamic=False)
        return self.flex_fn

    def _block_mask(self, sq, sk):
        if (sq, sk) not in self.block_masks:
            from torch.nn.attention.flex_attention import create_block_mask

            offset = sk - sq  # causal aligned to the bottom-right corner, as flash_attn

            def causal_mod(b, h, i, j):
                return i + offset >= j

            self.block_masks[(sq, sk)] = create_block_mask(causal_mod, None, None, sq, sk, device="cuda")
        return self.block_masks[(sq, sk)]


def short(exc):
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:240] if text else ''}"


# ---- the clock a measurement ran at ------------------------------------------------------------------------
def window_stats(samples, t0, t1):
    """Mean SM clock (MHz) and board power (W) of the (host time, clock, power[, reasons]) samples taken
    inside [t0, t1] (time.perf_counter seconds), with their count; None when no sample falls inside.
    Where samples carry NVML's clock-event reasons (a bitmask; None where NVML gave none), also the
    fraction of those samples with the SW power cap set (power_cap_frac) and with a thermal or hardware
    slowdown set (thermal_frac): a measured "power-capped" rather than one inferred from the power
    reading. Without reasons in the window those two keys are absent."""
    inside = [s for s in samples if t0 <= s[0] <= t1]
    if not inside:
        return None
    out = {"clock_mhz": round(statistics.fmean(s[1] for s in inside)),
           "power_w": round(statistics.fmean(s[2] for s in inside), 1), "samples": len(inside)}
    reasons = [s[3] for s in inside if len(s) > 3 and s[3] is not None]
    if reasons:
        out["power_cap_frac"] = round(sum(1 for r in reasons if r & NVML_CLOCKS_EVENT_REASON_SW_POWER_CAP)
                                      / len(reasons), 2)
        out["thermal_frac"] = round(sum(1 for r in reasons if r & NVML_CLOCKS_EVENT_REASONS_THERMAL)
                                    / len(reasons), 2)
    return out


# nvml.h's field for the board's current power (mW). nvmlDeviceGetPowerUsage returns a 1 s average on
# Ampere (except GA100) and newer, Hopper included: a phase shorter than that second (a short ab_steady
# phase in its own process) reads low, with the idle time before it averaged in.
NVML_FI_DEV_POWER_INSTANT = 186

# nvml.h's clock-event reasons (nvmlClocksEventReason*, formerly nvmlClocksThrottleReason*): the bits of
# nvmlDeviceGetCurrentClocksEventReasons' mask, each set while that reason holds the SM clock below its
# maximum. SwPowerCap is the board's power limit (700 W on our H100) pulling the clock down.
NVML_CLOCKS_EVENT_REASON_GPU_IDLE = 0x1
NVML_CLOCKS_EVENT_REASON_APPLICATIONS_CLOCKS_SETTING = 0x2
NVML_CLOCKS_EVENT_REASON_SW_POWER_CAP = 0x4
NVML_CLOCKS_EVENT_REASON_HW_SLOWDOWN = 0x8
NVML_CLOCKS_EVENT_REASON_SYNC_BOOST = 0x10
NVML_CLOCKS_EVENT_REASON_SW_THERMAL_SLOWDOWN = 0x20
NVML_CLOCKS_EVENT_REASON_HW_THERMAL_SLOWDOWN = 0x40
NVML_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN = 0x80
NVML_CLOCKS_EVENT_REASON_DISPLAY_CLOCK_SETTING = 0x100
# the thermal and hardware slowdowns (window_stats' thermal_frac): not the power cap, but a clock that
# the board's temperature or its hardware protection held down
NVML_CLOCKS_EVENT_REASONS_THERMAL = (NVML_CLOCKS_EVENT_REASON_HW_SLOWDOWN | NVML_CLOCKS_EVENT_REASON_SW_THERMAL_SLOWDOWN
                                     | NVML_CLOCKS_EVENT_REASON_HW_THERMAL_SLOWDOWN
                                     | NVML_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN)


class _CtypesNvml:
    """The NVML calls GpuSampler makes, on libnvidia-ml through ctypes, with pynvml's names."""

    NVML_CLOCK_SM = 1

    def __init__(self):
        import ctypes

        self._c = ctypes
        self._lib = ctypes.CDLL("libnvidia-ml.so.1")

        class Value(ctypes.Union):
            _fields_ = [("dVal", ctypes.c_double), ("uiVal", ctypes.c_uint), ("ulVal", ctypes.c_ulong),
                        ("ullVal", ctypes.c_ulonglong), ("sllVal", ctypes.c_longlong), ("siVal", ctypes.c_int)]

        class FieldValue(ctypes.Structure):  # nvml.h's nvmlFieldValue_t
            _fields_ = [("fieldId", ctypes.c_uint), ("scopeId", ctypes.c_uint), ("timestamp", ctypes.c_longlong),
                        ("latencyUsec", ctypes.c_longlong), ("valueType", ctypes.c_int), ("nvmlReturn", ctypes.c_int),
                        ("value", Value)]

        self._field_value = FieldValue  # built once: the sampler's thread reads a field every few ms
        self._reasons_fn = None  # (name, function) of the clock-event reasons call, looked up once

    def _check(self, rc, what):
        if rc != 0:
            raise RuntimeError(f"NVML {what} returned {rc}")

    def nvmlInit(self):
        self._check(self._lib.nvmlInit_v2(), "nvmlInit_v2")

    def nvmlDeviceGetHandleByIndex(self, index):
        handle = self._c.c_void_p()
        self._check(self._lib.nvmlDeviceGetHandleByIndex_v2(self._c.c_uint(index), self._c.byref(handle)),
                    "nvmlDeviceGetHandleByIndex_v2")
        return handle

    def nvmlDeviceGetClockInfo(self, handle, clock):
        mhz = self._c.c_uint()
        self._check(self._lib.nvmlDeviceGetClockInfo(handle, self._c.c_int(clock), self._c.byref(mhz)),
                    "nvmlDeviceGetClockInfo")
        return mhz.value

    def nvmlDeviceGetPowerUsage(self, handle):
        mw = self._c.c_uint()
        self._check(self._lib.nvmlDeviceGetPowerUsage(handle, self._c.byref(mw)), "nvmlDeviceGetPowerUsage")
        return mw.value

    def nvmlDeviceGetFieldValues(self, handle, field_ids):
        """nvmlFieldValue_t records (fieldId, nvmlReturn, value.uiVal, ...) of the fields asked for."""
        values = (self._field_value * len(field_ids))()
        for v, f in zip(values, field_ids):
            v.fieldId = f
        self._check(self._lib.nvmlDeviceGetFieldValues(handle, self._c.c_int(len(field_ids)), values),
                    "nvmlDeviceGetFieldValues")
        return list(values)

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle):
        """The clock-event reasons bitmask (NVML_CLOCKS_EVENT_REASON_*). Drivers before the "event" name
        export the same call, same mask, only as nvmlDeviceGetCurrentClocksThrottleReasons."""
        if self._reasons_fn is None:  # once, not on every sample: a missing symbol is a failed dlsym each time
            for name in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
                fn = getattr(self._lib, name, None)  # ctypes raises AttributeError for a symbol not exported
                if fn is not None:
                    self._reasons_fn = (name, fn)
                    break
            else:
                raise RuntimeError("NVML has no nvmlDeviceGetCurrentClocksEventReasons (nor its older name)")
        name, fn = self._reasons_fn
        mask = self._c.c_ulonglong()
        self._check(fn(handle, self._c.byref(mask)), name)
        return mask.value


class GpuSampler:
    """The SM clock and board power of one GPU, read through NVML by a host thread every `period_s`
    while a timed segment runs, so that a record says at what clock it ran (under a power cap the
    clock moves with the kernel: docs/perf-notes.md, session 15). Power is NVML's current reading
    (NVML_FI_DEV_POWER_INSTANT) where the driver answers it, else nvmlDeviceGetPowerUsage, which on
    Ampere and newer averages the last second (`power_kind` says which: "instant" or "1 s average").
    Each sample also carries NVML's current clock-event reasons (the NVML_CLOCKS_EVENT_REASON_* mask;
    None where the driver or binding does not answer), so that a record can say it was power-capped
    from a measurement: (perf_counter time, SM MHz, W, reasons).
    NVML through pynvml, else through ctypes; inert (no samples) where neither answers."""

    def __init__(self, index, period_s=0.002):
        self.period_s = period_s
        self.samples = []
        self._thread = None
        self._stop = threading.Event()
        self.power_kind = None  # no NVML: no power either
        try:
            try:
                import pynvml
            except ImportError:  # the driver's library through ctypes
                pynvml = _CtypesNvml()
            pynvml.nvmlInit()
            self._nvml = pynvml
            self._handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            self._instant = False
            self._reasons = None  # the clock-event reasons call, where one answers
            self.power_kind = "1 s average"
            self._read()
        except Exception:  # no NVML, or it refuses: records carry no clock
            self._nvml = None
            return
        try:
            self._instant_power_w()
            self._instant = True
            self.power_kind = "instant"
        except Exception:  # an older driver or binding: the averaged reading
            pass
        # The reasons call under its newer name, else its older one (pynvml may have both, or a name
        # whose symbol this driver lacks): the first that answers here is the one the samples use.
        for name in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
            try:
                call = getattr(pynvml, name)
                call(self._handle)
            except Exception:
                continue
            self._reasons = call
            break

    @property
    def available(self):
        return self._nvml is not None

    def _instant_power_w(self):
        (fv,) = self._nvml.nvmlDeviceGetFieldValues(self._handle, [NVML_FI_DEV_POWER_INSTANT])
        if fv.nvmlReturn != 0:
            raise RuntimeError(f"NVML field {NVML_FI_DEV_POWER_INSTANT} returned {fv.nvmlReturn}")
        return fv.value.uiVal / 1000.0

    def _read(self):
        n = self._nvml
        power = self._instant_power_w() if self._instant else n.nvmlDeviceGetPowerUsage(self._handle) / 1000.0
        return (time.perf_counter(), n.nvmlDeviceGetClockInfo(self._handle, n.NVML_CLOCK_SM), power,
                self._clock_reasons())

    def _clock_reasons(self):
        """The clock-event reasons mask now; None without the call, or where it fails this once (the
        sample's clock and power still count: the reasons are the lesser part of it)."""
        if not self._reasons:
            return None
        try:
            return int(self._reasons(self._handle))
        except Exception:
            return None

    def _run(self):
        while not self._stop.is_set():
            try:
                self.samples.append(self._read())
            except Exception:
                return
            self._stop.wait(self.period_s)

    def start(self):
        if not self.available:
            return
        self.samples = []
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self):
        """The samples since start() (an empty list when inert)."""
        if self._thread is None:
            return []
        self._stop.set()
        self._thread.join()
        self._thread = None
        return self.samples


# ---- one measurement --------------------------------------------------------------------------------------
class Timer:
    def __init__(self, torch, args):
        self.torch, self.args = torch, args
        self.flush_buf = None if args.no_flush else torch.empty(256 << 20, dtype=torch.int8, device="cuda")
        self.load_calls = 0
        self.sampler = None if args.no_clock_samples else GpuSampler(torch.cuda.current_device())
        self.last_segment = None  # window_stats of the last timed segment (None: no samples)
        if args.condition_ms > 0:
            # The same tensor-core load before every timed segment: each implementation then starts from
            # the same power state instead of inheriting the one the previous implementation left.
            self.load_a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
            self.load_b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
            for _ in range(3):
                self.load_a @ self.load_b
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(20):
                self.load_a @ self.load_b
            end.record()
            torch.cuda.synchronize()
            self.load_calls = max(1, round(args.condition_ms / (start.elapsed_time(end) / 20)))

    def condition(self):
        for _ in range(self.load_calls):
            self.load_a @ self.load_b

    def times_ms(self, fn, rep_ms=None, warmup=None):
        """CUDA-event times (ms) of timed calls of fn after `warmup` untimed ones; about rep_ms of GPU time."""
        torch, a = self.torch, self.args
        rep_ms = a.rep_ms if rep_ms is None else rep_ms
        warmup = a.warmup if warmup is None else warmup
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(max(1, warmup)):
            fn()
        end.record()
        torch.cuda.synchronize()
        est = max(start.elapsed_time(end) / max(1, warmup), 1e-3)
        n = max(a.min_reps, min(a.max_reps, int(rep_ms / est)))
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        if self.sampler is not None:
            self.sampler.start()
        if hasattr(torch.cuda, "_sleep"):
            torch.cuda._sleep(10_000_000)  # ~5 ms of GPU time: the CPU queues the first calls meanwhile
        self.condition()
        for i in range(n):
            if self.flush_buf is not None:
                self.flush_buf.zero_()  # cold L2 for every call, as do_bench
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        t_end = time.perf_counter()
        samples = self.sampler.stop() if self.sampler is not None else []
        # The timed calls are the last starts[0] -> ends[-1] of GPU time before synchronize returned.
        span_s = starts[0].elapsed_time(ends[-1]) / 1000.0
        self.last_segment = window_stats(samples, t_end - span_s, t_end) if samples else None
        return [s.elapsed_time(e) for s, e in zip(starts, ends)]

    def median_ms(self, fn):
        """(median ms, reps) of fn over CUDA-event-timed calls after warm-up."""
        t = self.times_ms(fn)
        return statistics.median(t), len(t)


def first_call(torch, prep, pass_name):
    """(the function to time, peak_mem_bytes, tensors for the spot check) of one pass of one prepared
    implementation: one untimed call measures the memory and gives the outputs to compare."""
    grad = torch.autograd.grad
    torch.cuda.synchronize()
    if pass_name == "fwd":
        def call():
            with torch.no_grad():
                return prep.call()

        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        out = call()
        torch.cuda.synchronize()
        return call, torch.cuda.max_memory_allocated() - before, [prep.out_bshd(out)]
    if pass_name == "fwd+bwd":
        def step():
            o = prep.call()
            return o, grad(o, prep.leaves, prep.dout)

        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        out, grads = step()
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - before
        return step, peak, [prep.out_bshd(out.detach())] + [prep.grad_bshd(g) for g in grads]
    # bwd: one forward whose graph is kept, then the backward alone, timed
    out = prep.call()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    grads = grad(out, prep.leaves, prep.dout, retain_graph=True)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - before
    return (lambda: grad(out, prep.leaves, prep.dout, retain_graph=True), peak,
            [prep.out_bshd(out.detach())] + [prep.grad_bshd(g) for g in grads])


def run_pass(torch, prep, pass_name, timer):
    """(ms, reps, peak_mem_bytes, tensors for the spot check) of one pass of one implementation, timed alone."""
    fn, peak, tensors = first_call(torch, prep, pass_name)
    ms, reps = timer.median_ms(fn)
    return ms, reps, peak, tensors


def interleaved_times(timer, fns, rounds, ctx, segments=None):
    """{name: [[ms per timed call] per round]} over `rounds` rounds; each round times every implementation
    once, in an order rotated by one per round and reversed in odd rounds, with 1/rounds of the rep
    budget. The H100 here runs at its 700 W power limit on these kernels and its SM clock moves
    (1500-1980 MHz seen within one case), so timing one implementation after the other lets the clock
    drift decide ratios; interleaving spreads it evenly. `segments`, when given, gets {name: [the
    timer's last_segment per round]} (the clock each round ran at)."""
    names = list(fns)
    out = {n: [] for n in names}
    if segments is not None:
        segments.update({n: [] for n in names})
    for r in range(max(1, rounds)):
        order = names[r % len(names):] + names[:r % len(names)] if names else []
        if r % 2:
            order.reverse()  # odd rounds run backwards: each implementation meets different neighbours
        for n in order:
            with ctx(n):
                out[n].append(timer.times_ms(fns[n], rep_ms=timer.args.rep_ms / max(1, rounds),
                                             warmup=timer.args.warmup if r == 0 else 1))
                if segments is not None:
                    segments[n].append(timer.last_segment)
    return out


TOL = {("fwd", "bf16"): 2e-2, ("fwd", "fp16"): 5e-3, ("grad", "bf16"): 4e-2, ("grad", "fp16"): 1e-2}


def spot_check(torch, got, ref, ref_name, dtype, pass_name, impl):
    """max |got - ref| and max |got - ref| / max |ref| over the output (and gradients)."""
    max_abs, rel = 0.0, 0.0
    for g, r in zip(got, ref):
        diff = (g.float() - r.float()).abs().max().item()
        scale = r.float().abs().max().item()
        max_abs = max(max_abs, diff)
        rel = max(rel, diff / scale if scale > 0 else diff)
    tol = TOL[("fwd" if pass_name == "fwd" else "grad", dtype)] * (2 if "sdpa_math" in (impl, ref_name) else 1)
    flag = None
    if not rel <= tol:  # also catches NaN
        flag = f"> tol {tol:g}"
    return dict(ref=ref_name, max_abs_diff=max_abs, rel_diff=rel, tol=tol, flag=flag)


# ---- the run ------------------------------------------------------------------------------------------------
def reference_order(names):
    """Spot-check reference preference: FA2 through SDPA, then cuDNN, then flashcute SM80, then the rest."""
    pref = ("sdpa_flash", "sdpa_cudnn", "flashcute_sm80")
    return [n for n in pref if n in names] + [n for n in names if n not in pref]


def classify(exc):
    text = str(exc)
    if "out of memory" in text.lower() or type(exc).__name__ == "OutOfMemoryError":
        return "oom"
    if isinstance(exc, NotImplementedError) or "No available kernel" in text or "not supported" in text.lower():
        return "unsupported"
    return "error"


class Progress:
    def __init__(self, total):
        self.total, self.done, self.bar = total, 0, None
        try:
            from tqdm import tqdm

            self.bar = tqdm(total=total, file=sys.stderr, unit="meas", dynamic_ncols=True,
                            mininterval=0.5 if sys.stderr.isatty() else 15.0)
        except ImportError:
            pass

    def step(self, n=1):
        self.done += n
        if self.bar is not None:
            self.bar.update(n)

    def line(self, msg):
        elapsed = time.time() - T0
        text = f"[{self.done}/{self.total} {elapsed:5.0f}s] {msg}"
        if self.bar is not None:
            self.bar.write(text, file=sys.stderr)
        else:
            print(text, file=sys.stderr, flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def measure_case(torch, impls, timer, case, passes, args, deadline, progress):
    """Records of every implementation x pass on one case (same inputs for all). Per pass: one untimed
    call of each implementation (peak memory, spot check), then the timing in interleaved rounds."""
    dt = {"bf16": torch.bfloat16, "fp16": torch.float16}[case["dtype"]]
    torch.manual_seed(0)
    shape = (case["batch"], case["seqlen"], case["heads"], case["d"])
    q, k, v = (torch.randn(shape, device="cuda", dtype=dt, requires_grad=True) for _ in range(3))
    dout = torch.randn(shape, device="cuda", dtype=dt)
    records = []
    stopped = False
    for p in passes:
        if deadline and time.time() > deadline:
            stopped = True
            break
        ref, fns, recs = None, {}, {}
        for name in reference_order(impls.names):
            rec = dict(case, impl=name, **{"pass": p}, flops=grid.pass_flops(case, p), status="ok", ms=None,
                       tflops=None, reps=None, round_ms=None, peak_mem_bytes=None, spot=None, error=None)
            recs[name] = rec
            if name == "sdpa_math" and case["seqlen"] > args.math_max_seqlen:
                rec.update(status="skipped", error=f"seqlen > --math-max-seqlen {args.math_max_seqlen}")
            elif name == "flashcute_sm90" and not impls.sm90_forward_runs(dt, case["d"])[0]:
                rec.update(status="unsupported", error=impls.sm90_forward_runs(dt, case["d"])[1])
            else:
                try:
                    with impls.context(name, p):
                        prep = impls.prepare(name, q, k, v, dout, case["causal"])
                        fn, peak, tensors = first_call(torch, prep, p)
                    rec["peak_mem_bytes"] = peak
                    if ref is None:
                        ref = (name, tensors)
                    else:
                        rec["spot"] = spot_check(torch, tensors, ref[1], ref[0], case["dtype"], p, name)
                    fns[name] = fn
                    del prep, tensors
                except Exception as exc:  # a refusal or failure of one implementation is a record, not the end
                    rec.update(status=classify(exc), error=short(exc))
                    if rec["status"] == "oom":
                        torch.cuda.empty_cache()
        del ref
        segments = {}
        try:
            times = interleaved_times(timer, fns, args.rounds, lambda n: impls.context(n, p), segments)
        except Exception as exc:  # e.g. out of memory with every implementation's graph alive: time one by one
            log(f"interleaved timing failed ({short(exc)}); timing one implementation at a time")
            torch.cuda.empty_cache()
            times = {}
            for name, fn in fns.items():
                try:
                    with impls.context(name, p):
                        times[name] = [timer.times_ms(fn)]
                except Exception as exc2:
                    recs[name].update(status=classify(exc2), error=short(exc2))
        for name, per_round in times.items():
            t = [x for r in per_round for x in r]
            recs[name].update(ms=statistics.median(t), reps=len(t),
                              round_ms=[round(statistics.median(r), 4) for r in per_round])
            recs[name]["tflops"] = grid.tflops(recs[name]["flops"], recs[name]["ms"])
            recs[name].update(clock_fields(segments.get(name, [])))
        del fns, times
        records += recs.values()
        progress.step(len(recs))
    del q, k, v, dout
    torch.cuda.empty_cache()
    flag_outliers(records)
    return records, stopped


def clock_fields(segments):
    """A record's clock fields from its rounds' window_stats (None where a round has no samples): the
    median over rounds of the mean SM clock and power, and the per-round clocks; {} without samples.
    Where rounds have NVML's clock-event reasons, also the median over them of the fraction of samples
    power-capped (power_cap_frac) and thermally or hardware slowed (thermal_frac)."""
    got = [s for s in segments if s]
    if not got:
        return {}
    out = {"sm_clock_mhz": round(statistics.median(s["clock_mhz"] for s in got)),
           "power_w": round(statistics.median(s["power_w"] for s in got), 1),
           "round_sm_clock_mhz": [s["clock_mhz"] if s else None for s in segments]}
    for key in ("power_cap_frac", "thermal_frac"):
        fracs = [s[key] for s in got if key in s]
        if fracs:
            out[key] = round(statistics.median(fracs), 2)
    return out


def flag_outliers(records):
    """Within tolerance but far from the others: 5x the median difference of the pass (3+ compared)."""
    for p in {r["pass"] for r in records}:
        spots = [r["spot"] for r in records if r["pass"] == p and r.get("spot")]
        if len(spots) < 3:
            continue
        median = statistics.median(s["rel_diff"] for s in spots)
        for s in spots:
            if not s["flag"] and median > 0 and s["rel_diff"] > 5 * median and s["rel_diff"] > s["tol"] / 4:
                s["flag"] = f"outlier: {s['rel_diff'] / median:.0f}x the median difference of this pass"


def case_line(case, records):
    parts = []
    for p in ("fwd", "bwd", "fwd+bwd"):
        sel = {r["impl"]: r for r in records if r["pass"] == p}
        if not sel:
            continue
        cells = " ".join(f"{report.label(n).split(' (')[0]}={r['tflops']:.0f}" if r["tflops"] else
                         f"{report.label(n).split(' (')[0]}={r['status']}" for n, r in sel.items())
        parts.append(f"{p}: {cells}")
    return (f"{case['dtype']} d{case['d']} {'causal' if case['causal'] else 'full'} s{case['seqlen']}  "
            + " | ".join(parts))


def write_outputs(doc, out, fa3_path, plots):
    fa3 = report.load_fa3(fa3_path) if fa3_path else None
    md = report.markdown(doc, fa3)
    if not out:
        print(md)
        return
    os.makedirs(out, exist_ok=True)
    report.write_json(os.path.join(out, "results.json"), doc)
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(md)
    written = ["results.json", "results.md"]
    if plots:
        try:
            import bench_plots

            written += bench_plots.plot_all(doc, out, fa3)
        except ImportError as exc:
            log(f"no plots ({exc}); draw them elsewhere with bench/bench_plots.py {out}/results.json --out DIR")
    log(f"wrote {', '.join(written)} under {out}")
    print(md)


def flex_warm_worker(torch, impls, cases, passes, spec):
    """Warm-up worker K of N: the first call of FlexAttention on cases K, K+N, ... for every pass, through the
    same code path as the timed run (same compile options, shapes and grad modes), so the compiled graphs
    and kernels land in torch's on-disk caches. Nothing is timed or written."""
    k, n = (int(x) for x in spec.split("/"))
    for case in cases[k::n]:
        dt = {"bf16": torch.bfloat16, "fp16": torch.float16}[case["dtype"]]
        shape = (case["batch"], case["seqlen"], case["heads"], case["d"])
        q, k_, v = (torch.randn(shape, device="cuda", dtype=dt, requires_grad=True) for _ in range(3))
        dout = torch.randn(shape, device="cuda", dtype=dt)
        for p in passes:
            try:
                first_call(torch, impls.prepare("flex", q, k_, v, dout, case["causal"]), p)
            except Exception as exc:  # the timed run records it
                log(f"flex warm-up, {case['dtype']} d{case['d']} s{case['seqlen']} {p}: {short(exc)}")
        del q, k_, v, dout
        torch.cuda.empty_cache()
    return 0


def warm_flex(argv, procs):
    """Runs `procs` warm-up workers (this script with --flex-warm-worker K/N) and waits for them."""
    t0 = time.time()
    env = dict(os.environ, TORCHINDUCTOR_COMPILE_THREADS=str(max(1, (os.cpu_count() or 2) // procs)))
    workers = [subprocess.Popen([sys.executable, os.path.abspath(__file__), *argv, "--flex-warm-worker",
                                 f"{k}/{procs}"], env=env) for k in range(procs)]
    rcs = [w.wait() for w in workers]
    log(f"FlexAttention compiled in {procs} warm-up processes in {time.time() - t0:.0f} s (exit codes {rcs})")


def main(argv=None):
    faulthandler.enable()
    os.environ.setdefault("FLASHCUTE_NATIVE_BACKTRACE", "1")
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    fa3_path = find_fa3_json(args.fa3_json)
    if args.merge:
        docs = []
        for path in args.merge:
            with open(path) as f:
                docs.append(json.load(f))
        doc = report.merge_docs(docs)
        problems = report.validate_doc(doc)
        if problems:
            fail("merged document does not follow the schema: " + "; ".join(problems[:5]))
        write_outputs(doc, args.out, fa3_path, not args.no_plots)
        return 0

    cases = grid.make_cases(args.dtypes, args.head_dims, args.seqlens, args.causals)
    if args.dry_run:
        for c in cases:
            print(f"{c['dtype']} d{c['d']} {'causal' if c['causal'] else 'full'} s{c['seqlen']} "
                  f"b{c['batch']} h{c['heads']}: " + ", ".join(f"{p} {grid.pass_flops(c, p) / 1e12:.2f} TFLOP"
                                                              for p in args.pass_list))
        # Packages that are not installed here are left out of the estimate (assumed absent there too).
        names = [n for n in args.impls if n not in ("flash_attn", "fa3")
                 or importlib.util.find_spec("flash_attn" if n == "flash_attn" else "flash_attn_interface")]
        est = estimate(cases, args, names)
        print(f"{len(cases)} cases x {len(args.pass_list)} passes x {len(names)} implementations "
              f"({', '.join(names)}); expected about {est / 60:.1f} min on an H100"
              + (f", capped at --max-seconds {args.max_seconds:g}" if args.max_seconds else ""))
        return 0

    try:
        import flashcute
    except ImportError as exc:
        fail(f"cannot import flashcute ({exc}); build it (cmake --preset gpu && cmake --build --preset gpu -j) "
             "and run with PYTHONPATH=build/gpu/python, or pip install --no-build-isolation .")
    if not flashcute.extension_available():
        fail(f"flashcute's compiled extension is not importable ({flashcute._ext.IMPORT_ERROR})")
    try:
        import torch
    except ImportError as exc:
        fail(f"torch is required ({exc})")
    if not torch.cuda.is_available():
        fail("no CUDA device")

    impls = Impls(torch, flashcute, args.impls, args.no_flex)
    if args.flex_warm_worker:
        return flex_warm_worker(torch, impls, cases, args.pass_list, args.flex_warm_worker)
    for n in impls.notes:
        log(n)
    meta = environment(torch, flashcute, args, argv)
    meta["implementations"] = impls.names
    meta["notes"] = impls.notes
    log(f"{meta['device']} (driver {meta['driver']}, SM clock {meta['clock_sm_before']}), torch {meta['torch']}, "
        f"cuDNN {meta['cudnn']}, flashcute {meta['flashcute']} [{meta['flashcute_build']}]")
    est = estimate(cases, args, impls.names)
    log(f"{len(cases)} cases x {len(args.pass_list)} passes x {len(impls.names)} implementations; expected about "
        f"{est / 60:.1f} min" + (f" (stops at --max-seconds {args.max_seconds:g})" if args.max_seconds else ""))

    if "flex" in impls.names and args.flex_warm_procs > 1:
        warm_flex(argv, args.flex_warm_procs)
    timer = Timer(torch, args)
    meta["power_reading"] = timer.sampler.power_kind if timer.sampler is not None else None
    deadline = T0 + args.max_seconds if args.max_seconds else None
    progress = Progress(len(cases) * len(args.pass_list) * len(impls.names))
    records, stopped_early = [], None
    for i, case in enumerate(cases):
        recs, stopped = measure_case(torch, impls, timer, case, args.pass_list, args, deadline, progress)
        records += recs
        if recs:
            progress.line(case_line(case, recs))
        if args.out:  # after every case: an interrupted run keeps what it measured
            os.makedirs(args.out, exist_ok=True)
            report.write_json(os.path.join(args.out, "results.json"), report.make_doc(meta, records))
        if stopped:
            left = progress.total - progress.done
            stopped_early = (f"--max-seconds {args.max_seconds:g} reached after {time.time() - T0:.0f} s; "
                             f"{left} of {progress.total} measurements not run (from case {i + 1} of {len(cases)})")
            log(stopped_early)
            break
    progress.close()
    meta["clock_sm_after"] = gpu_clocks(torch.cuda.current_device()).get("clock_sm")
    meta["elapsed_s"] = round(time.time() - T0, 1)
    doc = report.make_doc(meta, records, stopped_early)
    write_outputs(doc, args.out, fa3_path, not args.no_plots)
    flagged = [r for r in records if r.get("spot") and r["spot"].get("flag")]
    for n in report.spot_notes(records):
        log(n)
    if any(r["impl"].startswith("flashcute") and r["status"] in ("error", "oom") for r in records):
        log("a flashcute measurement failed (see the Notes of results.md)")
        return 1
    return 1 if flagged and args.strict else 0


def estimate(cases, args, impls):
    return grid.estimate_seconds(cases, args.pass_list, impls, args.warmup, args.rep_ms, args.min_reps, args.max_reps,
                                 args.math_max_seqlen, args.rounds)


if __name__ == "__main__":
    sys.exit(main())
