"""Records -> rows, ratios, Markdown tables and the JSON document of bench.py (no torch).

A record is one implementation x case x pass:
    {impl, dtype, d, causal, seqlen, batch, heads, pass, flops, status, ms, tflops, reps, round_ms (median of
     each interleaved round),
     peak_mem_bytes, spot: {ref, max_abs_diff, rel_diff, tol, flag} | None, error}
status: "ok", "error", "oom", "unsupported" (the implementation refuses the case), "skipped" (capped,
e.g. MATH past --math-max-seqlen) or "not run" (--max-seconds reached).
"""

import json
import os

SCHEMA = "flashcute-bench/1"
STATUSES = ("ok", "error", "oom", "unsupported", "skipped", "not run")
RECORD_KEYS = ("impl", "dtype", "d", "causal", "seqlen", "batch", "heads", "pass", "flops", "status", "ms", "tflops",
               "peak_mem_bytes", "spot")

OURS = ("flashcute_sm80", "flashcute_sm90")
PEERS = ("sdpa_flash", "sdpa_cudnn", "sdpa_efficient", "sdpa_math", "flex", "flash_attn", "fa3")
LABELS = {
    "flashcute_sm80": "flashcute SM80",
    "flashcute_sm90": "flashcute SM90",
    "sdpa_flash": "FA2 (SDPA)",
    "sdpa_cudnn": "cuDNN (SDPA)",
    "sdpa_efficient": "mem-eff (SDPA)",
    "sdpa_math": "MATH (SDPA, unfused)",
    "flex": "FlexAttention",
    "flash_attn": "flash_attn pkg",
    "fa3": "FA3 (installed)",
}
FA2_IMPLS = ("sdpa_flash", "flash_attn")  # FlashAttention-2: through SDPA, or the flash_attn package
FA3_STORED = "FA3 from the stored JSON, not this run"


def label(impl):
    return LABELS.get(impl, impl)


def case_key(r):
    return (r["dtype"], r["pass"], r["d"], r["causal"], r["seqlen"])


# ---- rows and ratios ----------------------------------------------------------------------------------
def ratio(a, b):
    return a / b if a and b else None


def best_of(tflops_by_impl, names):
    """(name, TFLOP/s) of the fastest of `names` present in the dict, or (None, None)."""
    present = {n: tflops_by_impl[n] for n in names if tflops_by_impl.get(n)}
    if not present:
        return None, None
    name = max(present, key=present.get)
    return name, present[name]


def make_rows(records, fa3=None):
    """One row per (dtype, pass, d, causal, seqlen): TFLOP/s per implementation and the ratios.

    ours = the best flashcute path on the row; best peer = the fastest peer on the row (MATH included:
    it never wins, and leaving it in keeps the rule simple). fa3: {(d, causal, seqlen, pass): TFLOP/s}
    from the stored JSON (bf16 only), see load_fa3."""
    rows = {}
    for r in records:
        key = case_key(r)
        row = rows.setdefault(key, dict(dtype=r["dtype"], pass_=r["pass"], d=r["d"], causal=r["causal"],
                                        seqlen=r["seqlen"], batch=r["batch"], heads=r["heads"], tflops={}, status={},
                                        spot={}, mem={}))
        row["status"][r["impl"]] = r["status"]
        if r["status"] == "ok" and r.get("tflops"):
            row["tflops"][r["impl"]] = r["tflops"]
        if r.get("peak_mem_bytes") is not None:
            row["mem"][r["impl"]] = r["peak_mem_bytes"]
        if r.get("spot"):
            row["spot"][r["impl"]] = r["spot"]
    out = []
    for key in sorted(rows, key=_row_order):
        row = rows[key]
        t = row["tflops"]
        row["ours_impl"], row["ours"] = best_of(t, OURS)
        row["best_peer"], best = best_of(t, PEERS)
        row["vs_best"] = ratio(row["ours"], best)
        fa2_name, fa2 = best_of(t, FA2_IMPLS)
        row["vs_fa2"] = ratio(row["ours"], fa2)
        row["vs_cudnn"] = ratio(row["ours"], t.get("sdpa_cudnn"))
        stored = (fa3 or {}).get((row["d"], row["causal"], row["seqlen"], row["pass_"])) if row["dtype"] == "bf16" else None
        row["fa3_stored"] = stored.get("fa3") if stored else None
        row["vs_fa3_stored"] = ratio(row["ours"], row["fa3_stored"])
        # BENCHMARKING.md's conversion: (ours / cuDNN here) / (FA3 / cuDNN stored); >= 1 = ahead of FA3.
        fa3_over_cudnn = ratio(stored.get("fa3"), stored.get("cudnn")) if stored else None
        row["vs_fa3_via_cudnn"] = ratio(row["vs_cudnn"], fa3_over_cudnn)
        out.append(row)
    return out


def _row_order(key):
    dtype, pass_, d, causal, seqlen = key
    return (dtype, ("fwd", "bwd", "fwd+bwd").index(pass_) if pass_ in ("fwd", "bwd", "fwd+bwd") else 9, d, causal,
            seqlen)


def load_fa3(path):
    """{(d, causal, seqlen, pass): {"fa3", "cudnn", "fa2"}} from h100_peers_fa3_cudnn_fa2.json (bf16)."""
    with open(path) as f:
        table = json.load(f)
    out = {}
    for r in table.get("rows", []):
        for p in ("fwd", "bwd"):
            if isinstance(r.get(p), dict):
                out[(int(r["d"]), bool(r["causal"]), int(r["seqlen"]), p)] = r[p]
    return out


# ---- formatting -----------------------------------------------------------------------------------------
def fmt_num(x, digits=0):
    return "–" if x is None else f"{x:.{digits}f}"


def fmt_ratio(x):
    return "–" if x is None else f"{x:.2f}"


def fmt_bytes(n):
    if n is None:
        return "–"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def cell(row, impl):
    if impl in row["tflops"]:
        text = fmt_num(row["tflops"][impl])
        spot = row["spot"].get(impl)
        return text + " ⚠" if spot and spot.get("flag") else text
    status = row["status"].get(impl)
    return {"oom": "oom", "error": "err", "unsupported": "n/s", "skipped": "cap", "not run": "–"}.get(status, "–")


def md_table(head, rows):
    """A Markdown table: the header cells, then one list of cells per row."""
    return "\n".join(["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] +
                     ["| " + " | ".join(cells) + " |" for cells in rows])


def markdown_table(rows, impls, with_fa3):
    """The table for one (dtype, pass): rows in order, TFLOP/s per implementation, then the ratios."""
    head = ["d", "causal", "seqlen", "batch x heads"] + [label(n) for n in impls]
    head += ["ours (path)", "ours / best peer", "ours / FA2", "ours / cuDNN"]
    if with_fa3:
        head += ["FA3 (stored JSON, not this run)", "ours / FA3 (stored)", "ours vs FA3 via cuDNN"]
    head += ["max rel diff"]
    body = []
    for r in rows:
        cells = [str(r["d"]), "yes" if r["causal"] else "no", str(r["seqlen"]), f"{r['batch']}x{r['heads']}"]
        cells += [cell(r, n) for n in impls]
        path = {"flashcute_sm80": "SM80", "flashcute_sm90": "SM90"}.get(r["ours_impl"], "–")
        cells.append(f"{fmt_num(r['ours'])} ({path})" if r["ours"] else "–")
        best = f"{fmt_ratio(r['vs_best'])} ({label(r['best_peer'])})" if r["vs_best"] else "–"
        cells += [best, fmt_ratio(r["vs_fa2"]), fmt_ratio(r["vs_cudnn"])]
        if with_fa3:
            cells += [fmt_num(r["fa3_stored"]), fmt_ratio(r["vs_fa3_stored"]), fmt_ratio(r["vs_fa3_via_cudnn"])]
        diffs = [s["rel_diff"] for s in r["spot"].values() if s.get("rel_diff") is not None]
        cells.append(f"{max(diffs):.1e}" if diffs else "–")
        body.append(cells)
    return md_table(head, body)


def impls_in(records):
    order = OURS + PEERS
    seen = {r["impl"] for r in records}
    return [n for n in order if n in seen] + sorted(seen - set(order))


def markdown(doc, fa3=None):
    """results.md: a header with the environment, then one table per (dtype, pass), then notes."""
    records = doc["records"]
    rows = make_rows(records, fa3)
    impls = impls_in(records)
    lines = ["# flashcute benchmark", ""]
    for m in doc["meta"]["runs"]:
        lines.append(describe_run(m))
    lines += ["", "TFLOP/s, FLOPs as docs/BENCHMARKING.md (fwd 4·b·h·s²·d, halved for causal; bwd 2.5×, fwd+bwd "
              "3.5×); batch = 16384/seqlen, heads = 2048/d. ours = the faster flashcute path on the row; best peer "
              "= the fastest other implementation on the row. Cells: oom = out of memory, err = error, n/s = not "
              "supported, cap = skipped by a cap (MATH past --math-max-seqlen), ⚠ = spot check outside tolerance.",
              ""]
    for dtype in sorted({r["dtype"] for r in rows}, key=lambda x: (x != "bf16", x)):
        for p in ("fwd", "bwd", "fwd+bwd"):
            sel = [r for r in rows if r["dtype"] == dtype and r["pass_"] == p]
            if not sel:
                continue
            with_fa3 = bool(fa3) and dtype == "bf16" and p in ("fwd", "bwd")
            cols = [n for n in impls if any(n in r["status"] for r in sel)]
            lines += [f"## {dtype} {p}", "", markdown_table(sel, cols, with_fa3), ""]
    if fa3 and any(r["dtype"] == "bf16" and r["pass_"] in ("fwd", "bwd") for r in rows):
        lines += [f"FA3 columns: {FA3_STORED} (FlashAttention-3 measured earlier on this H100 type, bf16 fwd/bwd "
                  "only). 'ours vs FA3 via cuDNN' = (ours / cuDNN in this run) / (FA3 / cuDNN in the stored JSON); "
                  ">= 1 means ahead of FA3, the comparison BENCHMARKING.md asks for.", ""]
    notes = spot_notes(records) + error_notes(records)
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    if doc.get("stopped_early"):
        lines += [f"Stopped early (--max-seconds): {doc['stopped_early']}", ""]
    return "\n".join(lines)


def describe_run(m):
    clocks = m.get("clock_sm_before", "?")
    if m.get("clock_sm_after"):
        clocks = f"{clocks} before, {m['clock_sm_after']} after"
    return (f"- run {m.get('date', '?')} on {m.get('device', '?')} (driver {m.get('driver', '?')}, SM clock {clocks} "
            f"of max {m.get('clock_sm_max', '?')}), torch {m.get('torch', '?')}, CUDA {m.get('cuda', '?')}, cuDNN "
            f"{m.get('cudnn', '?')}, flashcute {m.get('flashcute', '?')} ({m.get('flashcute_build', '?')}), git "
            f"{m.get('git', '?')}; {m.get('method', '')}; args: {m.get('argv', '')}")


def spot_notes(records):
    out = []
    for r in records:
        s = r.get("spot")
        if s and s.get("flag"):
            out.append(f"spot check {r['dtype']} {r['pass']} d{r['d']} {'causal' if r['causal'] else 'full'} "
                       f"s{r['seqlen']}: {label(r['impl'])} vs {label(s['ref'])}: rel diff {s['rel_diff']:.2e} "
                       f"(max abs {s['max_abs_diff']:.2e}) {s['flag']}")
    return out


def error_notes(records):
    seen, out = set(), []
    for r in records:
        if r["status"] in ("error", "unsupported") and r.get("error"):
            key = (r["impl"], r["status"], r["error"])
            if key in seen:
                continue
            seen.add(key)
            out.append(f"{label(r['impl'])} {r['status']} (first at {r['dtype']} {r['pass']} d{r['d']} "
                       f"s{r['seqlen']}): {r['error']}")
    return out


# ---- the JSON document ----------------------------------------------------------------------------------
def make_doc(meta, records, stopped_early=None):
    return {"schema": SCHEMA, "meta": {"runs": [meta]}, "records": records, "stopped_early": stopped_early}


def merge_docs(docs):
    """One document from several runs (chunks of the grid); a later record of the same impl x case wins."""
    runs, by_key = [], {}
    for d in docs:
        runs += d["meta"]["runs"]
        for r in d["records"]:
            by_key[(r["impl"],) + case_key(r)] = r
    stopped = [d["stopped_early"] for d in docs if d.get("stopped_early")]
    return {"schema": SCHEMA, "meta": {"runs": runs}, "records": list(by_key.values()),
            "stopped_early": "; ".join(stopped) or None}


def validate_doc(doc):
    """Problems with a results document (an empty list when it follows the schema)."""
    problems = []
    if doc.get("schema") != SCHEMA:
        problems.append(f"schema is {doc.get('schema')!r}, not {SCHEMA!r}")
    runs = doc.get("meta", {}).get("runs")
    if not isinstance(runs, list) or not runs:
        problems.append("meta.runs must be a non-empty list")
    for i, r in enumerate(doc.get("records", [])):
        missing = [k for k in RECORD_KEYS if k not in r]
        if missing:
            problems.append(f"record {i}: missing {', '.join(missing)}")
            continue
        if r["status"] not in STATUSES:
            problems.append(f"record {i}: status {r['status']!r}")
        if r["pass"] not in ("fwd", "bwd", "fwd+bwd"):
            problems.append(f"record {i}: pass {r['pass']!r}")
        if r["status"] == "ok" and not (isinstance(r["ms"], (int, float)) and r["ms"] > 0 and r["tflops"]):
            problems.append(f"record {i}: status ok without a positive ms and tflops")
        if r["status"] != "ok" and r["tflops"] is not None:
            problems.append(f"record {i}: status {r['status']} with tflops")
    return problems


def write_json(path, doc):
    """Atomic write, so an interrupted run leaves the last complete document."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)
