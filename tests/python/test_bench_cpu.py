# CPU tests of the benchmark code (bench/): FLOP counting, the grid, ratios, table formatting, the JSON
# schema, merging chunks and the command line's dry run. No torch, no GPU: the measuring half of
# bench.py runs only on the GPU machine, the rest is checked here.
import json
import os
import pathlib
import shutil
import subprocess
import tarfile
import sys

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import bench_grid as grid  # noqa: E402
import bench_report as report  # noqa: E402


# ---- FLOPs ---------------------------------------------------------------------------------------------
def test_fwd_flops_formula():
    # 4 * b * h * sq * sk * d, and 2 * (d + dv) * ... when the value head dim differs
    assert grid.fwd_flops(2, 16, 8192, 8192, 128) == 4 * 2 * 16 * 8192 * 8192 * 128
    assert grid.fwd_flops(1, 1, 10, 20, 64, d_v=128) == 2 * (64 + 128) * 10 * 20


def test_causal_halves_only_square():
    full = grid.fwd_flops(8, 32, 2048, 2048, 64)
    assert grid.fwd_flops(8, 32, 2048, 2048, 64, causal=True) == full // 2
    assert grid.fwd_flops(1, 1, 128, 256, 64, causal=True) == grid.fwd_flops(1, 1, 128, 256, 64)


def test_pass_factors():
    case = dict(dtype="bf16", d=128, causal=False, seqlen=4096, batch=4, heads=16)
    f = grid.pass_flops(case, "fwd")
    assert f == 4 * 4 * 16 * 4096 * 4096 * 128
    assert grid.pass_flops(case, "bwd") == pytest.approx(2.5 * f)
    assert grid.pass_flops(case, "fwd+bwd") == pytest.approx(3.5 * f)


def test_tflops():
    assert grid.tflops(2e12, 1000.0) == pytest.approx(2.0)
    assert grid.tflops(1e12, 1.0) == pytest.approx(1000.0)
    assert grid.tflops(1e12, 0) is None and grid.tflops(1e12, None) is None


# ---- grid ------------------------------------------------------------------------------------------------
def test_grid_shapes_keep_16k_tokens_and_hidden_2048():
    cases = grid.make_cases(grid.DTYPES, grid.HEAD_DIMS, grid.SEQLENS, [False, True])
    assert len(cases) == 2 * 3 * 6 * 2
    for c in cases:
        assert c["batch"] * c["seqlen"] == 16384 and c["heads"] * c["d"] == 2048


def test_grid_rejects_bad_seqlen():
    with pytest.raises(ValueError):
        grid.shape_for(3000, 64)


def test_parsers():
    assert grid.parse_passes("fwd,fwdbwd,bwd,fwd") == ["fwd", "fwd+bwd", "bwd"]
    assert grid.parse_causal("both") == [False, True] and grid.parse_causal("true") == [True]
    assert grid.parse_list("64, 128", int) == [64, 128]
    with pytest.raises(ValueError, match="fp8"):
        grid.parse_list("bf16,fp8", str, grid.DTYPES)
    with pytest.raises(ValueError):
        grid.parse_passes("forward")


def test_estimate_grows_with_work_and_quick_is_short():
    quick = grid.make_cases(*(grid.QUICK[k] for k in ("dtypes", "head_dims", "seqlens", "causal")))
    impls = ["flashcute_sm80", "sdpa_flash", "sdpa_cudnn", "sdpa_efficient", "sdpa_math"]
    t_quick = grid.estimate_seconds(quick, grid.PASSES, impls)
    assert 0 < t_quick < 180
    full = grid.make_cases(["bf16"], grid.HEAD_DIMS, grid.SEQLENS, [False, True])
    assert grid.estimate_seconds(full, grid.PASSES, impls) > t_quick
    assert grid.estimate_seconds(full, grid.PASSES, impls + ["flex"]) > grid.estimate_seconds(full, grid.PASSES, impls)


def test_rounds_split_the_rep_budget():
    # 1 ms calls, 100 ms budget: one round of 100 reps (capped at max_reps) vs 3 rounds of 33; the extra rounds
    # add one warm-up call each.
    assert grid.calls_per_measurement(1.0, 3, 100.0, 5, 1000, rounds=1) == 1 + 3 + 100
    assert grid.calls_per_measurement(1.0, 3, 100.0, 5, 1000, rounds=3) == 1 + 3 + 2 + 3 * 33
    # min_reps holds per round
    assert grid.calls_per_measurement(50.0, 3, 100.0, 5, 30, rounds=3) == 1 + 3 + 2 + 3 * 5


# ---- records, rows, ratios --------------------------------------------------------------------------------
def record(impl, tflops, pass_="fwd", d=128, causal=False, seqlen=8192, dtype="bf16", status="ok", spot=None, mem=1 << 20):
    batch, heads = grid.shape_for(seqlen, d)
    case = dict(dtype=dtype, d=d, causal=causal, seqlen=seqlen, batch=batch, heads=heads)
    flops = grid.pass_flops(case, pass_)
    ms = flops / (tflops * 1e12) * 1e3 if status == "ok" else None
    return dict(case, impl=impl, **{"pass": pass_}, flops=flops, status=status, ms=ms,
                tflops=grid.tflops(flops, ms) if ms else None, reps=10 if ms else None,
                peak_mem_bytes=mem if status == "ok" else None, spot=spot, error=None if status == "ok" else "x")


def sample_records():
    recs = []
    for p in ("fwd", "bwd"):
        recs += [record("flashcute_sm80", 300, p), record("flashcute_sm90", 450, p), record("sdpa_flash", 350, p),
                 record("sdpa_cudnn", 600, p), record("sdpa_efficient", 170, p),
                 record("sdpa_math", 0, p, status="skipped")]
    recs.append(record("flashcute_sm80", 250, "fwd", causal=True,
                       spot=dict(ref="sdpa_flash", max_abs_diff=0.5, rel_diff=0.1, tol=0.02, flag="> tol 0.02")))
    recs.append(record("sdpa_flash", 280, "fwd", causal=True))
    return recs


def test_rows_pick_best_path_and_best_peer():
    rows = report.make_rows(sample_records())
    r = next(x for x in rows if x["pass_"] == "fwd" and not x["causal"])
    assert r["ours_impl"] == "flashcute_sm90" and r["ours"] == pytest.approx(450)
    assert r["best_peer"] == "sdpa_cudnn"
    assert r["vs_best"] == pytest.approx(0.75)
    assert r["vs_fa2"] == pytest.approx(450 / 350)
    assert r["vs_cudnn"] == pytest.approx(0.75)
    assert r["status"]["sdpa_math"] == "skipped" and "sdpa_math" not in r["tflops"]


def test_ratio_missing_peer_is_none():
    rows = report.make_rows([record("flashcute_sm80", 300)])
    assert rows[0]["vs_best"] is None and rows[0]["vs_fa2"] is None and rows[0]["vs_cudnn"] is None


def test_fa3_stored_columns(tmp_path):
    path = tmp_path / "fa3.json"
    path.write_text(json.dumps({"rows": [{"d": 128, "causal": False, "seqlen": 8192, "batch": 2, "heads": 16,
                                          "fwd": {"fa3": 671, "cudnn": 629, "fa2": 356},
                                          "bwd": {"fa3": 595, "cudnn": 524, "fa2": 312}}]}))
    fa3 = report.load_fa3(str(path))
    assert fa3[(128, False, 8192, "fwd")]["fa3"] == 671
    rows = report.make_rows(sample_records(), fa3)
    r = next(x for x in rows if x["pass_"] == "fwd" and not x["causal"])
    assert r["fa3_stored"] == 671
    assert r["vs_fa3_stored"] == pytest.approx(450 / 671)
    assert r["vs_fa3_via_cudnn"] == pytest.approx((450 / 600) / (671 / 629))
    # fp16 rows never get the (bf16) stored FA3 numbers
    fp16 = report.make_rows([record("flashcute_sm80", 300, dtype="fp16")], fa3)
    assert fp16[0]["fa3_stored"] is None


def test_shipped_fa3_json_loads():
    for c in (BENCH.parent / "shared" / "docs", BENCH.parent.parent / "shared" / "docs"):
        path = c / "h100_peers_fa3_cudnn_fa2.json"
        if path.is_file():
            fa3 = report.load_fa3(str(path))
            assert fa3[(128, False, 8192, "fwd")]["fa3"] > 0
            return
    pytest.skip("shared/docs/h100_peers_fa3_cudnn_fa2.json is not beside this checkout")


# ---- formatting ---------------------------------------------------------------------------------------------
def test_number_formats():
    assert report.fmt_num(None) == "–" and report.fmt_num(312.4) == "312"
    assert report.fmt_ratio(0.8349) == "0.83" and report.fmt_ratio(None) == "–"
    assert report.fmt_bytes(3 << 30) == "3.0 GiB" and report.fmt_bytes(512) == "512 B"


def meta():
    return {"date": "2026-11-22T11:00:00Z", "device": "NVIDIA H100 80GB HBM3", "driver": "580", "torch": "2.11",
            "cudnn": 91900, "flashcute": "0.1.0", "flashcute_build": "archs=80;90a", "method": "events"}


def test_markdown_tables_per_dtype_and_pass():
    doc = report.make_doc(meta(), sample_records())
    md = report.markdown(doc)
    assert "## bf16 fwd" in md and "## bf16 bwd" in md and "## bf16 fwd+bwd" not in md
    fwd = md.split("## bf16 fwd")[1].split("##")[0]
    lines = [l for l in fwd.splitlines() if l.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    assert head[:4] == ["d", "causal", "seqlen", "batch x heads"]
    assert "flashcute SM80" in head and "cuDNN (SDPA)" in head and "ours / best peer" in head
    assert len(lines[1].split("|")) == len(lines[0].split("|"))  # separator matches the header
    full = next(l for l in lines[2:] if "| no |" in l)
    cells = [c.strip() for c in full.strip("|").split("|")]
    assert cells[head.index("ours (path)")] == "450 (SM90)"
    assert cells[head.index("ours / best peer")] == "0.75 (cuDNN (SDPA))"
    assert cells[head.index("MATH (SDPA, unfused)")] == "cap"
    causal = next(l for l in lines[2:] if "| yes |" in l)
    assert "250 ⚠" in causal  # the flagged spot check is marked in the cell
    assert "spot check bf16 fwd d128 causal s8192" in md


def test_markdown_fa3_columns_are_labelled(tmp_path):
    fa3 = {(128, False, 8192, "fwd"): {"fa3": 671, "cudnn": 629, "fa2": 356}}
    md = report.markdown(report.make_doc(meta(), sample_records()), fa3)
    assert "FA3 from the stored JSON, not this run" in md
    assert "| 671 |" in md


# ---- JSON schema and merging ---------------------------------------------------------------------------------
def test_doc_validates_and_round_trips(tmp_path):
    doc = report.make_doc(meta(), sample_records())
    assert report.validate_doc(doc) == []
    path = tmp_path / "results.json"
    report.write_json(str(path), doc)
    assert report.validate_doc(json.loads(path.read_text())) == []
    assert not (tmp_path / "results.json.tmp").exists()


def test_validate_catches_problems():
    bad = report.make_doc(meta(), [record("flashcute_sm80", 300)])
    bad["records"][0]["status"] = "fine"
    del bad["records"][0]["flops"]
    bad["records"].append(dict(record("sdpa_flash", 300), status="error"))
    problems = report.validate_doc(bad)
    assert any("missing flops" in p for p in problems)
    assert any("status error with tflops" in p for p in problems)
    assert report.validate_doc({"schema": "x", "meta": {}, "records": []})


def test_merge_keeps_all_runs_and_latest_record():
    a = report.make_doc(dict(meta(), date="a"), [record("flashcute_sm80", 300), record("sdpa_flash", 350)])
    b = report.make_doc(dict(meta(), date="b"), [record("flashcute_sm80", 320), record("flashcute_sm80", 200, d=64)])
    m = report.merge_docs([a, b])
    assert [r["date"] for r in m["meta"]["runs"]] == ["a", "b"]
    assert len(m["records"]) == 3
    assert report.validate_doc(m) == []
    rows = report.make_rows(m["records"])
    assert next(r for r in rows if r["d"] == 128)["ours"] == pytest.approx(320)


# ---- the command line, without a GPU ------------------------------------------------------------------------------
def run_bench(*args):
    return subprocess.run([sys.executable, str(BENCH / "bench.py"), *args], capture_output=True, text=True,
                          timeout=60)


def test_dry_run_lists_cases_and_estimate():
    p = run_bench("--dry-run", "--quick")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().splitlines()
    assert len(lines) == 9  # 8 cases and the summary
    assert "bf16 d64 full s2048 b8 h32" in lines[0]
    assert "expected about" in lines[-1] and "flex" not in lines[-1]


def test_bad_flags_exit_2():
    assert run_bench("--dry-run", "--dtype", "fp8").returncode == 2
    assert run_bench("--dry-run", "--seqlen", "3000").returncode == 2
    assert run_bench("--dry-run", "--impl", "nope").returncode == 2


def test_merge_cli_writes_tables(tmp_path):
    a = tmp_path / "a.json"
    report.write_json(str(a), report.make_doc(meta(), sample_records()))
    out = tmp_path / "out"
    p = run_bench("--merge", str(a), "--out", str(out), "--no-plots", "--fa3-json", "none")
    assert p.returncode == 0, p.stderr
    assert (out / "results.md").read_text().startswith("# flashcute benchmark")
    assert report.validate_doc(json.loads((out / "results.json").read_text())) == []


def test_plots_when_matplotlib_is_there(tmp_path):
    pytest.importorskip("matplotlib")
    import bench_plots

    files = bench_plots.plot_all(report.make_doc(meta(), sample_records()), str(tmp_path))
    assert "tflops_fwd.png" in files and "memory.png" in files
    assert all(os.path.getsize(tmp_path / f) > 1000 for f in files)


def test_outlier_flag():
    import bench

    def spot(rel):
        return dict(ref="sdpa_flash", max_abs_diff=rel, rel_diff=rel, tol=0.02, flag=None)

    recs = [dict(record(n, 300), spot=spot(x)) for n, x in
            (("sdpa_cudnn", 1e-3), ("sdpa_efficient", 1.2e-3), ("flashcute_sm80", 1.5e-2), ("flex", 1e-3))]
    bench.flag_outliers(recs)
    assert recs[2]["spot"]["flag"].startswith("outlier") and not recs[0]["spot"]["flag"]


def test_sm90_targets_rule():
    import sm90_targets as t

    assert t.target(512, 0.8) == 1.0 and t.target(1024, 1.1) == 1.1
    assert abs(t.target(2048, 0.9) - 1.05) < 1e-12 and abs(t.target(8192, 1.2) - 1.26) < 1e-12
    recs = [record("flashcute_sm90", 700.0), record("sdpa_cudnn", 600.0), record("flashcute_sm90", 500.0, seqlen=512),
            record("sdpa_cudnn", 600.0, seqlen=512)]
    fa3 = {(128, False, 8192, "fwd"): {"fa3": 660.0, "cudnn": 600.0}, (128, False, 512, "fwd"): {"fa3": 300.0, "cudnn": 600.0}}
    got = {r[3]: r for r in t.rows(recs, fa3)}
    assert got[8192][9] is True and abs(got[8192][8] - 1.155) < 1e-9    # 700/600 = 1.167 >= 1.05 * 1.1
    assert got[512][9] is False and got[512][8] == 1.0                   # 500/600 < max(1, 0.5)
    # Several runs: the median of the per-run ratios decides (700/600, 600/600, 690/600 -> 1.15 < 1.155).
    runs = [[record("flashcute_sm90", o), record("sdpa_cudnn", 600.0)] for o in (700.0, 600.0, 690.0)]
    (row,) = t.rows(runs, fa3)
    assert row[9] is False and abs(row[6] - 1.15) < 1e-9 and row[4] == 690.0
    assert abs(row[10] - 1.0) < 1e-9 and abs(row[11] - 700 / 600) < 1e-9


def test_sm90_targets_plot(tmp_path):
    pytest.importorskip("matplotlib")
    import sm90_targets as t

    fa3 = {(d, c, s, "fwd"): {"fa3": 660.0, "cudnn": 600.0} for d in (64, 128) for c in (False, True)
           for s in (512, 8192)}
    recs = [record(impl, tf, seqlen=s, d=d, causal=c) for d in (64, 128) for c in (False, True) for s in (512, 8192)
            for impl, tf in (("flashcute_sm90", 700.0), ("sdpa_cudnn", 600.0))]
    table = t.rows(recs, fa3)
    assert len(table) == 8
    out = tmp_path / "targets.png"
    t.plot(table, str(out), "test")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def sm90_power_fixture(tmp_path):
    """Three runs' results files and a peer JSON: d 128 non-causal 8k with ab_steady's clock keys (ours with
    power_cap_frac, cuDNN without), causal 8k with bench.py's (ours without, cuDNN with) and 512 with none."""
    clocks = {False: [(1644, 698.3, 0.97), (1650, 700.1, 0.95), (1630, 690.0, 1.0)],
              True: [(1600, 680.0, 0.5), (1620, 690.0, 0.75), (1610, 685.0, 0.25)]}
    paths = []
    for i in range(3):
        recs = []
        for causal, (mhz, w, cap) in ((c, v[i]) for c, v in clocks.items()):
            ours, cudnn = record("flashcute_sm90", 680.0 + i, causal=causal), record("sdpa_cudnn", 610.0, causal=causal)
            if not causal:
                ours.update(clock_mhz=mhz, power_w=w, power_cap_frac=cap)
                cudnn.update(clock_mhz=mhz - 100, power_w=w + 40)
            else:
                ours.update(sm_clock_mhz=mhz, power_w=w)
                cudnn.update(sm_clock_mhz=mhz + 100, power_w=w - 20, power_cap_frac=cap)
            recs += [ours, cudnn]
        recs += [record("flashcute_sm90", 430.0, seqlen=512), record("sdpa_cudnn", 490.0 + i, seqlen=512)]
        paths.append(tmp_path / f"run{i}.json")
        paths[-1].write_text(json.dumps({"meta": {"runs": [{"date": "D", "git": f"round {i}"}]}, "records": recs}))
    peers = tmp_path / "peers.json"
    peers.write_text(json.dumps({"rows": [{"d": 128, "causal": c, "seqlen": s, "fwd": {"fa3": 660.0, "cudnn": 600.0}}
                                          for c in (False, True) for s in (512, 8192)]}))
    return [str(x) for x in paths] + ["--fa3-json", str(peers)]


# sm90_targets.py's output on sm90_power_fixture before --power existed (HEAD e6b0684): without --power it stays so.
SM90_TARGETS_NO_POWER = """\
# SM90 forward against the issue-7 targets

From 3 run(s) (D git round 0; D git round 1; D git round 2). Target: ours / cuDNN >= 1.05 x max(1, F) for seqlen \
>= 2k and >= max(1, F) for 512 and 1k; F = FA3 / cuDNN from the stored peer JSON (bf16 rows, used for fp16 too). \
Each cell is the median over the runs (TFLOP/s: of each; ours/cuDNN: of the ratio inside each run, with its range); \
met is decided on that median. 0 of 3 rows met.

| dtype | d | causal | seqlen | SM90 | cuDNN | ours/cuDNN | range | F (FA3/cuDNN, stored) | target | met |
|---|---|---|---|---|---|---|---|---|---|---|
| bf16 | 128 | no | 512 | 430 | 491 | 0.88 | 0.87-0.88 | 1.10 | 1.10 | no |
| bf16 | 128 | no | 8192 | 681 | 610 | 1.12 | 1.11-1.12 | 1.10 | 1.16 | no |
| bf16 | 128 | yes | 8192 | 681 | 610 | 1.12 | 1.11-1.12 | 1.10 | 1.16 | no |
"""


def test_sm90_targets_power_columns(tmp_path, capsys):
    """--power adds ours' and cuDNN's "MHz / W / cap" (medians over the runs) from either clock key, the cap
    only where the records have power_cap_frac, "–" without clock or power; without it the output is as before."""
    import sm90_targets as t

    argv = sm90_power_fixture(tmp_path)
    assert t.main(argv) == 0
    assert capsys.readouterr().out == SM90_TARGETS_NO_POWER
    assert t.main(argv + ["--power"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "NVML means over the phase, medians over the runs" in lines[2] and "SW power-cap" in lines[2]
    assert lines[4].endswith("| met | SM90 MHz / W / cap | cuDNN MHz / W / cap |")
    assert lines[5] == "|" + "---|" * 13
    cells = [ln.strip("| ").split(" | ") for ln in lines[6:]]
    got = {(c[2], c[3]): c[-2:] for c in cells}
    assert got[("no", "8192")] == ["1644 / 698 / 0.97", "1544 / 738"]   # ab_steady's clock_mhz
    assert got[("yes", "8192")] == ["1610 / 685", "1710 / 665 / 0.50"]  # bench.py's sm_clock_mhz
    assert got[("no", "512")] == ["–", "–"]                              # no clock or power
    # One run's records as they are; a case without cuDNN beside ours has no pair to take clocks from.
    assert t.power_cells([record("flashcute_sm90", 1.0, seqlen=512)]) == {("bf16", 128, False, 512): ("–", "–")}


def test_ab_cli_report_pairs_rounds(tmp_path):
    import ab_cli_report

    def write(name, rnd, tflops):
        rec = {"impl": "flashcute_sm90", "pass": "fwd", "d": 128, "causal": False, "seqlen": 8192,
               "status": "ok", "tflops": tflops}
        (tmp_path / f"{name}-r{rnd}-s0.json").write_text(json.dumps({"records": [rec]}))

    # Round 1 runs everything 20% slower (clock drift): the paired ratio still reads 1.1.
    for rnd, scale in ((0, 1.0), (1, 0.8), (2, 1.0)):
        write("base", rnd, 600 * scale)
        write("new", rnd, 660 * scale)
    text = ab_cli_report.table(str(tmp_path), ["base", "new"])
    row = [line for line in text.splitlines() if "flashcute_sm90" in line][0]
    assert "1.100 (1.100-1.100)" in row
    assert "| 600.0 |" in row and "| 660.0 |" in row


# ---- the clock a measurement ran at --------------------------------------------------------------------
def test_window_stats_keeps_the_window():
    bench = pytest.importorskip("bench")
    samples = [(0.0, 1000, 300.0), (1.0, 1500, 500.0), (2.0, 1700, 700.0), (3.0, 1900, 100.0)]
    got = bench.window_stats(samples, 0.5, 2.5)
    assert got == {"clock_mhz": 1600, "power_w": 600.0, "samples": 2}
    assert bench.window_stats(samples, 5.0, 6.0) is None
    assert bench.window_stats([], 0.0, 1.0) is None


def test_window_stats_clock_event_reason_fractions():
    """4-tuples with NVML's clock-event reasons add the power-cap and thermal fractions of the window's
    samples that carry reasons; 3-tuples (and None reasons) leave both keys out."""
    bench = pytest.importorskip("bench")
    cap, thermal = bench.NVML_CLOCKS_EVENT_REASON_SW_POWER_CAP, bench.NVML_CLOCKS_EVENT_REASON_HW_THERMAL_SLOWDOWN
    assert (cap, thermal, bench.NVML_CLOCKS_EVENT_REASONS_THERMAL) == (0x4, 0x40, 0x8 | 0x20 | 0x40 | 0x80)
    samples = [(0.0, 1900, 300.0, 0), (1.0, 1600, 700.0, cap), (2.0, 1600, 700.0, cap | 0x1),
               (3.0, 1700, 690.0, 0x2), (4.0, 1500, 700.0, cap | thermal), (5.0, 1980, 100.0, cap)]
    got = bench.window_stats(samples, 0.5, 4.5)
    assert got == {"clock_mhz": 1600, "power_w": 697.5, "samples": 4, "power_cap_frac": 0.75, "thermal_frac": 0.25}
    # 2 of 3 capped: rounded to 2 decimals; a sample without reasons (None, or a 3-tuple) is not counted
    mixed = [(0.0, 1600, 700.0, cap), (1.0, 1600, 700.0, None), (2.0, 1600, 700.0, cap), (3.0, 1600, 700.0),
             (4.0, 1600, 700.0, bench.NVML_CLOCKS_EVENT_REASON_SW_THERMAL_SLOWDOWN)]
    got = bench.window_stats(mixed, 0.0, 4.0)
    assert got["samples"] == 5 and got["power_cap_frac"] == 0.67 and got["thermal_frac"] == 0.33
    no_reasons = bench.window_stats([(0.0, 1600, 700.0, None), (1.0, 1700, 600.0)], 0.0, 1.0)
    assert no_reasons == {"clock_mhz": 1650, "power_w": 650.0, "samples": 2}


def test_clock_fields_carry_reason_fractions():
    bench = pytest.importorskip("bench")
    segs = [{"clock_mhz": 1500, "power_w": 700.0, "samples": 10, "power_cap_frac": 0.9, "thermal_frac": 0.0}, None,
            {"clock_mhz": 1700, "power_w": 690.0, "samples": 12, "power_cap_frac": 1.0, "thermal_frac": 0.1},
            {"clock_mhz": 1980, "power_w": 400.0, "samples": 9}]  # a round without reasons: not in the medians
    got = bench.clock_fields(segs)
    assert got["power_cap_frac"] == 0.95 and got["thermal_frac"] == 0.05 and got["sm_clock_mhz"] == 1700


def test_clock_fields_median_over_rounds():
    bench = pytest.importorskip("bench")
    segs = [{"clock_mhz": 1500, "power_w": 650.0, "samples": 10}, None,
            {"clock_mhz": 1700, "power_w": 690.0, "samples": 12}, {"clock_mhz": 1980, "power_w": 400.0, "samples": 9}]
    got = bench.clock_fields(segs)
    assert got == {"sm_clock_mhz": 1700, "power_w": 650.0, "round_sm_clock_mhz": [1500, None, 1700, 1980]}
    assert bench.clock_fields([None, None]) == {}
    assert bench.clock_fields([]) == {}


def test_gpu_sampler_is_inert_without_nvml(monkeypatch):
    bench = pytest.importorskip("bench")
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError

    class NoLibrary:
        def __init__(self):
            raise OSError("libnvidia-ml.so.1: cannot open shared object file")

    monkeypatch.setattr(bench, "_CtypesNvml", NoLibrary)  # nor is the driver's library there
    s = bench.GpuSampler(0)
    assert not s.available and s.power_kind is None
    s.start()
    assert s.stop() == []


def test_gpu_sampler_thread_collects_samples(monkeypatch):
    import time
    import types

    bench = pytest.importorskip("bench")
    fake = types.SimpleNamespace(NVML_CLOCK_SM=0, nvmlInit=lambda: None, nvmlDeviceGetHandleByIndex=lambda i: i,
                                 nvmlDeviceGetClockInfo=lambda h, kind: 1755,
                                 nvmlDeviceGetPowerUsage=lambda h: 612_000)  # mW
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    s = bench.GpuSampler(0, period_s=0.001)
    assert s.available
    t0 = time.perf_counter()
    s.start()
    time.sleep(0.05)
    samples = s.stop()
    t1 = time.perf_counter()
    assert len(samples) >= 5
    assert bench.window_stats(samples, t0, t1) == {"clock_mhz": 1755, "power_w": 612.0, "samples": len(samples)}
    assert s.stop() == []  # stopped: no thread left


def test_gpu_sampler_reads_nvml_through_ctypes(monkeypatch):
    import ctypes
    import time

    bench = pytest.importorskip("bench")
    calls = []

    class FakeLib:  # libnvidia-ml's C entry points: results through the pointer arguments, 0 = success
        def nvmlInit_v2(self):
            calls.append("init")
            return 0

        def nvmlDeviceGetHandleByIndex_v2(self, index, handle):
            handle._obj.value = 1000 + index.value
            return 0

        def nvmlDeviceGetClockInfo(self, handle, clock, mhz):
            assert handle.value == 1003 and clock.value == 1  # NVML_CLOCK_SM
            mhz._obj.value = 1830
            return 0

        def nvmlDeviceGetPowerUsage(self, handle, mw):
            mw._obj.value = 655_500
            return 0

    monkeypatch.setitem(sys.modules, "pynvml", None)
    monkeypatch.setattr(ctypes, "CDLL", lambda name: FakeLib())
    s = bench.GpuSampler(3, period_s=0.001)
    assert s.available and calls == ["init"]
    t0 = time.perf_counter()
    s.start()
    time.sleep(0.02)
    samples = s.stop()
    assert samples and bench.window_stats(samples, t0, time.perf_counter())["clock_mhz"] == 1830
    assert samples[0][2] == 655.5

    class Failing(FakeLib):
        def nvmlInit_v2(self):
            return 9  # NVML_ERROR_DRIVER_NOT_LOADED

    monkeypatch.setattr(ctypes, "CDLL", lambda name: Failing())
    assert not bench.GpuSampler(0).available


def test_gpu_sampler_prefers_instant_power(monkeypatch):
    """Where NVML answers NVML_FI_DEV_POWER_INSTANT the samples carry it, not nvmlDeviceGetPowerUsage's
    1 s average (which reads low over a phase shorter than that second); where the field fails, the
    average, and power_kind says which."""
    import types

    bench = pytest.importorskip("bench")

    def fake(field_return):
        def field_values(h, ids):
            assert ids == [bench.NVML_FI_DEV_POWER_INSTANT]
            return [types.SimpleNamespace(nvmlReturn=field_return, value=types.SimpleNamespace(uiVal=698_000))]
        return types.SimpleNamespace(NVML_CLOCK_SM=0, nvmlInit=lambda: None, nvmlDeviceGetHandleByIndex=lambda i: i,
                                     nvmlDeviceGetClockInfo=lambda h, kind: 1700,
                                     nvmlDeviceGetPowerUsage=lambda h: 350_000, nvmlDeviceGetFieldValues=field_values)

    monkeypatch.setitem(sys.modules, "pynvml", fake(0))
    s = bench.GpuSampler(0)
    assert s.power_kind == "instant" and s._read()[1:] == (1700, 698.0, None)
    monkeypatch.setitem(sys.modules, "pynvml", fake(2))  # NVML_ERROR_INVALID_ARGUMENT: field not there
    s = bench.GpuSampler(0)
    assert s.power_kind == "1 s average" and s._read()[1:] == (1700, 350.0, None)


def fake_nvml_lib(handle_value, mhz_value, mw_value):
    """A libnvidia-ml stand-in for the ctypes wrapper: init, the handle, the SM clock and the averaged power,
    each answering through its ctypes pointer argument."""

    class FakeLib:
        def nvmlInit_v2(self):
            return 0

        def nvmlDeviceGetHandleByIndex_v2(self, index, handle):
            handle._obj.value = handle_value
            return 0

        def nvmlDeviceGetClockInfo(self, handle, clock, mhz):
            mhz._obj.value = mhz_value
            return 0

        def nvmlDeviceGetPowerUsage(self, handle, mw):
            mw._obj.value = mw_value
            return 0

    return FakeLib


def test_gpu_sampler_instant_power_through_ctypes(monkeypatch):
    import ctypes

    bench = pytest.importorskip("bench")

    class FakeLib(fake_nvml_lib(7, 1650, 300_000)):
        def nvmlDeviceGetFieldValues(self, handle, count, values):
            assert count.value == 1 and values[0].fieldId == 186
            values[0].nvmlReturn = 0
            values[0].value.uiVal = 690_250
            return 0

    monkeypatch.setitem(sys.modules, "pynvml", None)
    monkeypatch.setattr(ctypes, "CDLL", lambda name: FakeLib())
    s = bench.GpuSampler(0)
    assert s.power_kind == "instant" and s._read()[1:] == (1650, 690.25, None)


def reasons_nvml(**calls):
    """A pynvml stand-in (instant power answered) with the given clock-event reasons calls by name."""
    import types

    def field_values(h, ids):
        return [types.SimpleNamespace(nvmlReturn=0, value=types.SimpleNamespace(uiVal=699_000))]

    return types.SimpleNamespace(NVML_CLOCK_SM=0, nvmlInit=lambda: None, nvmlDeviceGetHandleByIndex=lambda i: i,
                                 nvmlDeviceGetClockInfo=lambda h, kind: 1640,
                                 nvmlDeviceGetPowerUsage=lambda h: 500_000, nvmlDeviceGetFieldValues=field_values,
                                 **calls)


def test_gpu_sampler_clock_event_reasons_through_pynvml(monkeypatch):
    """pynvml's newer nvmlDeviceGetCurrentClocksEventReasons where it answers; the samples carry its mask
    and the window its power-cap fraction."""
    import time

    bench = pytest.importorskip("bench")
    masks = iter([0x4, 0x4, 0x0] * 1000)  # one sample in three not capped
    monkeypatch.setitem(sys.modules, "pynvml", reasons_nvml(
        nvmlDeviceGetCurrentClocksEventReasons=lambda h: next(masks),
        nvmlDeviceGetCurrentClocksThrottleReasons=lambda h: pytest.fail("the older name, with the newer there")))
    s = bench.GpuSampler(0, period_s=0.001)
    assert s._reasons and s._read()[1:] == (1640, 699.0, 0x4)
    masks = iter([0x4 | 0x1] * 3 + [0x4 | 0x20] + [0x0] * 1000)
    t0 = time.perf_counter()
    s.start()
    time.sleep(0.05)
    samples = s.stop()
    assert len(samples) >= 5 and [x[3] for x in samples[:5]] == [0x5, 0x5, 0x5, 0x24, 0x0]
    got = bench.window_stats(samples[:5], t0, time.perf_counter())
    assert got["power_cap_frac"] == 0.8 and got["thermal_frac"] == 0.2


def test_gpu_sampler_clock_event_reasons_older_name(monkeypatch):
    """A binding with only nvmlDeviceGetCurrentClocksThrottleReasons, or whose newer name fails on this
    driver (NVML_ERROR_FUNCTION_NOT_FOUND), reads the same mask through the older name."""
    bench = pytest.importorskip("bench")
    monkeypatch.setitem(sys.modules, "pynvml", reasons_nvml(nvmlDeviceGetCurrentClocksThrottleReasons=lambda h: 0x44))
    s = bench.GpuSampler(0)
    assert s._reasons and s._read()[3] == 0x44

    def not_found(h):
        raise RuntimeError("NVML_ERROR_FUNCTION_NOT_FOUND")

    monkeypatch.setitem(sys.modules, "pynvml", reasons_nvml(nvmlDeviceGetCurrentClocksEventReasons=not_found,
                                                            nvmlDeviceGetCurrentClocksThrottleReasons=lambda h: 0x4))
    s = bench.GpuSampler(0)
    assert s._reasons and s._read()[3] == 0x4


def test_gpu_sampler_without_clock_event_reasons(monkeypatch):
    """No reasons call, or one that fails at construction: the sampler still samples clock and power,
    the samples carry None, and window_stats leaves the fraction keys out."""
    import time

    bench = pytest.importorskip("bench")

    def failing(h):
        raise RuntimeError("NVML_ERROR_NOT_SUPPORTED")

    for nvml in (reasons_nvml(), reasons_nvml(nvmlDeviceGetCurrentClocksEventReasons=failing,
                                              nvmlDeviceGetCurrentClocksThrottleReasons=failing)):
        monkeypatch.setitem(sys.modules, "pynvml", nvml)
        s = bench.GpuSampler(0, period_s=0.001)
        assert s.available and s.power_kind == "instant" and not s._reasons
        assert s._read()[1:] == (1640, 699.0, None)
        t0 = time.perf_counter()
        s.start()
        time.sleep(0.01)
        samples = s.stop()
        assert samples and all(x[3] is None for x in samples)
        assert bench.window_stats(samples, t0, time.perf_counter()) == {"clock_mhz": 1640, "power_w": 699.0,
                                                                         "samples": len(samples)}


@pytest.mark.parametrize("symbol", ["nvmlDeviceGetCurrentClocksEventReasons",
                                    "nvmlDeviceGetCurrentClocksThrottleReasons"])
def test_gpu_sampler_clock_event_reasons_through_ctypes(monkeypatch, symbol):
    """The ctypes wrapper looks the newer symbol up, else the older one, and reads the mask through an
    unsigned long long pointer; a library with neither gives samples without reasons."""
    import ctypes

    bench = pytest.importorskip("bench")
    FakeLib = fake_nvml_lib(5, 1620, 700_000)

    def reasons(self, handle, mask):
        assert handle.value == 5 and isinstance(mask._obj, ctypes.c_ulonglong)
        mask._obj.value = 0x4 | 0x8
        return 0

    WithReasons = type("WithReasons", (FakeLib,), {symbol: reasons})
    monkeypatch.setitem(sys.modules, "pynvml", None)
    monkeypatch.setattr(ctypes, "CDLL", lambda name: WithReasons())
    s = bench.GpuSampler(0)
    assert s._reasons and s._read()[1:] == (1620, 700.0, 0xC)
    got = bench.window_stats([s._read(), s._read()], 0.0, float("inf"))
    assert got["power_cap_frac"] == 1.0 and got["thermal_frac"] == 1.0
    assert s._nvml._reasons_fn[0] == symbol  # the symbol looked up once, not on every sample

    monkeypatch.setattr(ctypes, "CDLL", lambda name: FakeLib())  # neither symbol: no reasons, still samples
    s = bench.GpuSampler(0)
    assert s.available and not s._reasons and s._read()[1:] == (1620, 700.0, None)


def test_ab_report_clock_columns(tmp_path):
    import ab_report

    def write(name, rnd, ours_t, peer_t, clocks):
        d = tmp_path / f"{name}-r{rnd}"
        d.mkdir()
        base = dict(dtype="bf16", d=64, causal=False, seqlen=2048, batch=8, heads=32, status="ok")
        recs = [dict(base, impl="flashcute_sm80", tflops=ours_t, **({"sm_clock_mhz": clocks[0]} if clocks else {})),
                dict(base, impl="sdpa_flash", tflops=peer_t, **({"sm_clock_mhz": clocks[1]} if clocks else {}))]
        for r in recs:
            r["pass"] = "fwd"
        (d / "results.json").write_text(json.dumps({"records": recs}))

    write("a", 0, 300.0, 300.0, None)
    write("b", 0, 330.0, 300.0, None)
    plain = ab_report.table(str(tmp_path), ["a", "b"], "sdpa_flash")
    assert "MHz" not in plain and "1.100" in plain
    write("a", 1, 300.0, 300.0, (1600, 1650))
    write("b", 1, 330.0, 300.0, (1800, 1700))
    with_clock = ab_report.table(str(tmp_path), ["a", "b"], "sdpa_flash")
    assert "a MHz (ours / sdpa_flash)" in with_clock and "1600 / 1650" in with_clock and "1800 / 1700" in with_clock


def test_ncu_pairs_table_from_csv():
    import argparse

    ncu_pairs = pytest.importorskip("ncu_pairs")
    rows = ['"ID","Process ID","Kernel Name","gpu__time_duration.sum"', '"","","","usecond"']
    n = 0

    def k(name, t):
        nonlocal n
        rows.append(f'"{n}","1","{name}","{t:,}"')
        n += 1

    for case in range(4):  # what inner() launches per case: marker, ours x3, marker, FA2 x3 (+ a fill), marker
        k("spin_kernel", 1)
        for _ in range(3):
            k("flashcute_prep", 10)
            k("flashcute_main", 1000 + case)
        k("spin_kernel", 1)
        for _ in range(3):
            k("flash_fwd_kernel", 1200 + case)
        k("fill", 30)
        k("spin_kernel", 1)
    times = ncu_pairs.kernel_times("==PROF== Connected\n" + "\n".join(rows) + "\nprogram output\n")
    assert len(times) == n and times[2] == ("flashcute_main", 1000.0)
    a = argparse.Namespace(passes="fwd", d="64", seqlen="2048,4096", calls=3, clock="base")
    lines = ncu_pairs.table(a, times).splitlines()
    body = [ln for ln in lines if ln.startswith("| fwd")]
    assert body == ["| fwd | 64 | no | 2048 | 1010.0 | 1210.0 | 1.198 |",
                    "| fwd | 64 | no | 4096 | 1011.0 | 1211.0 | 1.198 |",
                    "| fwd | 64 | yes | 2048 | 1012.0 | 1212.0 | 1.198 |",
                    "| fwd | 64 | yes | 4096 | 1013.0 | 1213.0 | 1.197 |"]
    # Beside cuDNN, in fp16: the column names the peer, and the records carry TFLOP/s from the mean time.
    c = argparse.Namespace(passes="fwd", d="64", seqlen="2048,4096", calls=3, clock="base", peer="sdpa_cudnn",
                           dtype="fp16", backend="sm90")
    assert "| cuDNN us | cuDNN / ours |" in ncu_pairs.table(c, times)
    doc = ncu_pairs.records(c, times)
    run = doc["meta"]["runs"][0]
    assert "--clock-control base" in run["method"]
    assert run["git"] == grid.git_revision(os.path.dirname(os.path.dirname(ncu_pairs.__file__)))
    recs = doc["records"]
    assert len(recs) == 8 and {r["impl"] for r in recs} == {"flashcute_sm90", "sdpa_cudnn"}
    first = recs[0]  # d 64 non-causal 2048: batch 8, heads 32, ours 1010 us per call
    assert (first["dtype"], first["seqlen"], first["causal"]) == ("fp16", 2048, False)
    assert first["tflops"] == pytest.approx(4 * 8 * 32 * 2048 * 2048 * 64 / 1010e-6 / 1e12)
    causal = [r for r in recs if r["causal"] and r["seqlen"] == 2048 and r["impl"] == "sdpa_cudnn"][0]
    assert causal["tflops"] == pytest.approx(2 * 8 * 32 * 2048 * 2048 * 64 / 1212e-6 / 1e12)
    sm90_targets = pytest.importorskip("sm90_targets")
    fa3 = {(64, False, 2048, "fwd"): {"fa3": 469, "cudnn": 465}}
    got = sm90_targets.rows([recs], fa3)
    assert len(got) == 1 and got[0][6] == pytest.approx(1210 / 1010)


def test_ncu_pairs_pipe_table_from_csv():
    """--pipe: per case and implementation, the tensor pipe's and the SMs' active shares, each kernel
    weighted by its time."""
    import argparse

    ncu_pairs = pytest.importorskip("ncu_pairs")
    hmma, active, elapsed = ncu_pairs.PIPE_METRICS
    rows = [f'"ID","Kernel Name","gpu__time_duration.sum","{hmma}","{active}","{elapsed}"', '"","","usecond","%","cycle","cycle"']
    n = 0

    def k(name, t, pct, act, ela):
        nonlocal n
        rows.append(f'"{n}","{name}","{t}","{pct}","{act:,}","{ela:,}"')
        n += 1

    k("spin_kernel", 1, 0, 1, 1)
    for _ in range(2):  # ours: a 100 us kernel at 90% / 95%, and a 300 us one at 50% / 75%
        k("flashcute_a", 100, 90, 950, 1000)
        k("flashcute_b", 300, 50, 750, 1000)
    k("spin_kernel", 1, 0, 1, 1)
    for _ in range(2):
        k("cudnn_fwd", 500, 80, 900, 1000)
    k("spin_kernel", 1, 0, 1, 1)
    got = ncu_pairs.kernel_rows("\n".join(rows), ncu_pairs.PIPE_METRICS)
    assert got[1] == ("flashcute_a", 100.0, {hmma: 90.0, active: 950.0, elapsed: 1000.0})
    a = argparse.Namespace(passes="fwd", d="128", seqlen="8192", calls=2, clock="base", peer="sdpa_cudnn", dtype="bf16")
    body = [ln for ln in ncu_pairs.pipe_table(a, got).splitlines() if ln.startswith("| fwd")]
    # ours: (100 x 90 + 300 x 50) / 400 = 60%, (100 x 95 + 300 x 75) / 400 = 80%; 400 us per call
    assert body[0] == "| fwd | 128 | no | 8192 | 400.0 | 60.0 | 80.0 | 500.0 | 80.0 | 90.0 |"
    assert body[1] == "| fwd | 128 | yes | 8192 | n/a | n/a | n/a | n/a | n/a | n/a |"  # not profiled
    assert "cuDNN tensor pipe %" in ncu_pairs.pipe_table(a, got)


def test_ab_locked_ratios_from_a_stand_in_ncu(tmp_path):
    """bench/ab_locked.py: each variant's CLI under the stand-in ncu (locked clock, forward kernels
    only), the warm-up launches dropped, the ratio base / variant inside each round."""
    ab_locked = pytest.importorskip("ab_locked")
    for name in ("base", "v2"):
        d = tmp_path / "bin" / name
        d.mkdir(parents=True)
        (d / "flashcute").write_text("#!/bin/sh\nexit 0\n")
        (d / "flashcute").chmod(0o755)
    (tmp_path / "bin" / "v2" / "args").write_text("--fwd-workspace zeroed\n")
    ncu = tmp_path / "ncu"
    # The arguments must be ncu's at the locked clock on the forward kernels, then the variant's
    # `flashcute bench` of the case with its args file's words and --cli-args last; 2 warm-up launches
    # at 9999 us (dropped), then 5 timed ones: base 1000 us, v2 950 us.
    ncu.write_text(
        "#!/bin/sh\n"
        "case \"$*\" in '--clock-control base --metrics gpu__time_duration.sum --kernel-name regex:fwd_kernel "
        "--csv --page raw '*'bench --backend sm90 --pass fwd --dtype bf16 --d 128 --seqlen 4096 --causal true "
        "--warmup 2 --iters 5'*'--fwd-workspace no') ;; *) echo \"bad: $*\" >&2; exit 3;; esac\n"
        "case \"$*\" in *'/v2/flashcute'*'--fwd-workspace zeroed --fwd-workspace no') t=950;; "
        "*'/base/flashcute bench'*'--iters 5 --fwd-workspace no') t=1000;; *) exit 4;; esac\n"
        "echo '==PROF== Connected'\n"
        "echo '\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"'\n"
        "echo '\"\",\"\",\"usecond\"'\n"
        "for i in 0 1; do echo \"\\\"$i\\\",\\\"fwd_kernel<x>\\\",\\\"9999\\\"\"; "
        "echo \"\\\"$i\\\",\\\"l2_flush\\\",\\\"5\\\"\"; done\n"
        "for i in 2 3 4 5 6; do echo \"\\\"$i\\\",\\\"fwd_kernel<x>\\\",\\\"$t\\\"\"; done\n")
    ncu.chmod(0o755)
    out = tmp_path / "ab.json"
    run = subprocess.run([sys.executable, str(BENCH / "ab_locked.py"), "--bin-dir", str(tmp_path / "bin"),
                          "--case", "128:yes:4096", "--rounds", "2", "--cli-args", "--fwd-workspace no",
                          "--ncu", str(ncu), "--json", str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    rows = [ln for ln in run.stdout.splitlines() if ln.startswith("| 128")]
    flops = 2 * 4 * 16 * 4096 * 4096 * 128  # causal: half of 4 b h s^2 d; batch 4, heads 16
    assert rows == [f"| 128 | yes | 4096 | base | 1000.0 | {flops / 1000e-6 / 1e12:.0f} | 1 |  |",
                    f"| 128 | yes | 4096 | v2 | 950.0 | {flops / 950e-6 / 1e12:.0f} | 1.053 | 1.053-1.053 |"]
    doc = json.loads(out.read_text())
    assert doc["variants"] == ["base", "v2"] and doc["errors"] == []
    assert doc["times_us"]["128:yes:4096"] == [{"base": 1000.0, "v2": 950.0}] * 2
    # Past --deadline no case starts: the run fails and its rows say why (not a failed kernel).
    late = subprocess.run([sys.executable, str(BENCH / "ab_locked.py"), "--bin-dir", str(tmp_path / "bin"),
                           "--case", "128:yes:4096", "--deadline", "0", "--ncu", str(ncu)], capture_output=True, text=True)
    assert late.returncode == 1 and "not started" in late.stderr
    assert [ln for ln in late.stdout.splitlines() if ln.startswith("| 128")] == [
        "| 128 | yes | 4096 | base | not run (deadline) | | | |", "| 128 | yes | 4096 | v2 | not run (deadline) | | | |"]
    # A variant whose every run fails, in a round that ran: "failed" (the stand-in ncu exits 4 for it).
    (tmp_path / "bin" / "v3").mkdir()
    (tmp_path / "bin" / "v3" / "flashcute").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "bin" / "v3" / "flashcute").chmod(0o755)
    bad = subprocess.run([sys.executable, str(BENCH / "ab_locked.py"), "--bin-dir", str(tmp_path / "bin"),
                          "--variants", "base,v3", "--case", "128:yes:4096", "--rounds", "1",
                          "--cli-args", "--fwd-workspace no", "--ncu", str(ncu)], capture_output=True, text=True)
    assert bad.returncode == 1
    assert [ln for ln in bad.stdout.splitlines() if ln.startswith("| 128")][1] == "| 128 | yes | 4096 | v3 | failed | | | |"
    # Too few forward kernels profiled: the run is an error, not a number.
    a = ab_locked.argparse.Namespace(iters=5)
    with pytest.raises(RuntimeError):
        ab_locked.launch_mean_us([("fwd_kernel", 1.0)] * 4, a)


def fake_sampler(clock_mhz, power_w, *reasons):
    """A GpuSampler stand-in: NVML read every 0.1 ms from start() to stop(), always these values; with
    `reasons` (one clock-event mask), 4-tuples carrying it."""
    import time

    class FakeSampler:
        available = True

        def __init__(self, index, period_s):
            pass

        def start(self):
            self.t0 = time.perf_counter()

        def stop(self):
            t1 = time.perf_counter()
            n = int((t1 - self.t0) / 1e-4) + 2
            return [(self.t0 + i * (t1 - self.t0) / (n - 1), clock_mhz, power_w, *reasons) for i in range(n)]

    return FakeSampler


def test_ab_steady_table_from_stand_in_binaries(tmp_path, monkeypatch):
    ab_steady = pytest.importorskip("ab_steady")
    for name, tflops in (("base", 500.0), ("v2", 525.0)):
        d = tmp_path / name
        d.mkdir()
        exe = d / "flashcute"
        # `flashcute bench`'s output for one case; the arguments must name it
        exe.write_text("#!/bin/sh\ncase \"$*\" in *'bench --dtype bf16 --d 128 --seqlen 8192 --causal false --pass fwd "
                       "--backend sm90 --warmup 20 --iters 5 --no-flush'*) ;; *) exit 3;; esac\n"
                       f"echo 'bf16 d128 causal s8192  fwd     flashcute_sm90     1.234 ms   {tflops} TFLOP/s'\n")
        exe.chmod(0o755)

    monkeypatch.setattr(ab_steady, "GpuSampler", fake_sampler(1600, 690.0))
    out = tmp_path / "steady.md"
    monkeypatch.setattr(sys, "argv", ["ab_steady", "--bin-dir", str(tmp_path), "--case", "128:no:8192",
                                      "--rounds", "3", "--iters", "5", "--out", str(out)])
    ab_steady.main()
    rows = [ln for ln in out.read_text().splitlines() if ln.startswith("| 128")]
    assert rows == ["| 128 | no | 8192 | 500.0 (1600, 690) | 525.0 (1600, 690) | 1.050 (1.050-1.050) |"]
    with pytest.raises(Exception):
        ab_steady.parse_case("128:maybe:8192")


def test_ab_steady_table_and_records_say_power_capped(tmp_path, monkeypatch):
    """Samples with the SW power-cap reason set put "cap" in each phase's parenthesis, its meaning in the
    header, and power_cap_frac / thermal_frac in the round records; samples whose reasons are None read
    exactly as before (no "cap" anywhere, no such keys)."""
    import json

    ab_steady = pytest.importorskip("ab_steady")
    d = tmp_path / "bins" / "base"
    d.mkdir(parents=True)
    (d / "flashcute").write_text("#!/bin/sh\necho 'bf16 d128 full s8192  fwd     flashcute_sm90     1.000 ms   683.5 TFLOP/s'\n")
    (d / "flashcute").chmod(0o755)

    def run(reasons, name):
        monkeypatch.setattr(ab_steady, "GpuSampler", fake_sampler(1644, 698.0, reasons))
        out, prefix = tmp_path / f"{name}.md", tmp_path / name
        monkeypatch.setattr(sys, "argv", ["ab_steady", "--bin-dir", str(tmp_path / "bins"), "--case", "128:no:8192",
                                          "--rounds", "2", "--iters", "5", "--out", str(out), "--records", str(prefix)])
        ab_steady.main()
        recs = [json.loads((tmp_path / f"{name}-round{r}.json").read_text())["records"][0] for r in (0, 1)]
        return out.read_text(), recs

    text, recs = run(pytest.importorskip("bench").NVML_CLOCKS_EVENT_REASON_SW_POWER_CAP | 0x1, "capped")
    assert [ln for ln in text.splitlines() if ln.startswith("| 128")] == ["| 128 | no | 8192 | 683.5 (1644, 698, cap 1.00) |"]
    assert "cap: the fraction of those NVML samples with the SW power-cap clock-event reason set" in text
    assert all(r["power_cap_frac"] == 1.0 and r["thermal_frac"] == 0.0 for r in recs)

    text, recs = run(None, "plain")
    assert [ln for ln in text.splitlines() if ln.startswith("| 128")] == ["| 128 | no | 8192 | 683.5 (1644, 698) |"]
    assert "cap" not in text and text.splitlines()[0].endswith("medians over the rounds.")
    assert all("power_cap_frac" not in r and "thermal_frac" not in r and r["clock_mhz"] == 1644 for r in recs)


def test_ab_steady_records_feed_sm90_targets(tmp_path, monkeypatch):
    """--records writes one bench.py results file per round; sm90_targets reads them as runs (base is
    flashcute_sm90, the peer keeps its name), the ratio of each round's own phases deciding the row."""
    ab_steady = pytest.importorskip("ab_steady")
    import json
    import sm90_targets

    d = tmp_path / "base"
    d.mkdir()
    (d / "flashcute").write_text("#!/bin/sh\necho 'bf16 d128 full s8192  fwd     flashcute_sm90     1.000 ms   700.0 TFLOP/s'\n")
    (d / "flashcute").chmod(0o755)
    tf = iter([600.0, 640.0])
    monkeypatch.setattr(ab_steady, "peer_runner", lambda a: (lambda case: (0.0, 0.0, next(tf))))
    monkeypatch.setattr(ab_steady, "GpuSampler", fake_sampler(1700, 650.0))
    prefix = tmp_path / "steady"
    monkeypatch.setattr(sys, "argv", ["ab_steady", "--bin-dir", str(tmp_path), "--case", "128:no:8192", "--rounds", "2",
                                      "--iters", "5", "--peer", "sdpa_cudnn", "--records", str(prefix)])
    ab_steady.main()
    runs = [json.loads((tmp_path / f"steady-round{r}.json").read_text())["records"] for r in (0, 1)]
    assert {r["impl"] for r in runs[0]} == {"flashcute_sm90", "sdpa_cudnn"}
    assert [r["tflops"] for r in runs[1] if r["impl"] == "sdpa_cudnn"] == [640.0]
    fa3 = {(128, False, 8192, "fwd"): {"fa3": 660.0, "cudnn": 600.0}}
    (row,) = sm90_targets.rows(runs, fa3)
    assert abs(row[6] - (700 / 600 + 700 / 640) / 2) < 1e-9 and row[9] is False  # 1.130 < 1.155


def test_ab_steady_cli_window_is_its_launches(tmp_path):
    """run_cli's window ends with the process and spans its launches (warm-up and timed, at the
    median), not the process's start-up (0.3 s here), or the whole process when that is shorter."""
    import time
    import types

    ab_steady = pytest.importorskip("ab_steady")
    exe = tmp_path / "flashcute"
    exe.write_text("#!/bin/sh\nsleep 0.3\necho 'bf16 d64 full s512  fwd     flashcute_sm90     2.000 ms   300.0 TFLOP/s'\n")
    exe.chmod(0o755)
    a = types.SimpleNamespace(dtype="bf16", passes="fwd", backend="sm90", iters=30)
    start = time.perf_counter()
    t0, t1, tf = ab_steady.run_cli(str(exe), (64, False, 512), a)
    end = time.perf_counter()
    assert tf == 300.0
    assert t1 - t0 == pytest.approx((ab_steady.CLI_WARMUP + 30) * 2e-3)  # 50 launches of 2 ms
    assert start + 0.3 - 0.1 < t0 < t1 <= end  # the last 0.1 s of a process of at least 0.3 s
    a.iters = 1000  # 2.04 s of launches: longer than the process, so the whole process
    t0, t1, _ = ab_steady.run_cli(str(exe), (64, False, 512), a)
    assert start < t0 and t1 - t0 < 1.0


def test_ab_steady_variant_args_file(tmp_path, monkeypatch):
    """One binary in two folders; the second's `args` file adds `--deterministic yes` to its command."""
    ab_steady = pytest.importorskip("ab_steady")
    script = ("#!/bin/sh\ncase \"$*\" in *'--no-flush --deterministic yes') t=400.0;; *'--no-flush') t=500.0;; "
              "*) exit 3;; esac\n"
              "echo \"bf16 d64 full s2048  bwd     flashcute_sm80     1.000 ms   $t TFLOP/s\"\n")
    for name in ("base", "det"):
        d = tmp_path / name
        d.mkdir()
        exe = d / "flashcute"
        exe.write_text(script)
        exe.chmod(0o755)
    (tmp_path / "det" / "args").write_text("--deterministic yes\n")
    assert ab_steady.variant_args(str(tmp_path / "det")) == ["--deterministic", "yes"]
    assert ab_steady.variant_args(str(tmp_path / "base")) == []

    class NoSampler:
        available = False

        def __init__(self, index, period_s):
            pass

        def start(self):
            pass

        def stop(self):
            return []

    monkeypatch.setattr(ab_steady, "GpuSampler", NoSampler)
    out = tmp_path / "steady.md"
    monkeypatch.setattr(sys, "argv", ["ab_steady", "--bin-dir", str(tmp_path), "--case", "64:no:2048", "--pass", "bwd",
                                      "--backend", "sm80", "--rounds", "2", "--iters", "5", "--out", str(out)])
    ab_steady.main()
    rows = [ln for ln in out.read_text().splitlines() if ln.startswith("| 64")]
    assert rows == ["| 64 | no | 2048 | 500.0 (–, –) | 400.0 (–, –) | 0.800 (0.800-0.800) |"]


def test_wave_sweep_table_from_stand_in_binary(tmp_path, monkeypatch):
    """Each shape runs `flashcute bench` with its batch x heads as --tokens / --hidden; the table has the
    tiles per SM wave and the SM clock of our phases."""
    wave_sweep = pytest.importorskip("wave_sweep")
    exe = tmp_path / "flashcute"
    # 2 x 16 heads at 8k (hidden 2048) reads 600, 1 x 33 (hidden 4224) 620; anything else fails
    exe.write_text("#!/bin/sh\ncase \"$*\" in\n"
                   "  *'--tokens 16384 --hidden 2048'*) t=600.0;;\n"
                   "  *'--tokens 8192 --hidden 4224'*) t=620.0;;\n"
                   "  *) exit 3;;\nesac\n"
                   "case \"$*\" in\n"
                   "  *'bench --dtype bf16 --d 128 --seqlen 8192 --causal false --pass fwd --backend sm90'*) ;;\n"
                   "  *) exit 4;;\nesac\n"
                   "echo \"bf16 d128 full   s8192  fwd     flashcute_sm90     1.000 ms   $t TFLOP/s\"\n")
    exe.chmod(0o755)

    monkeypatch.setattr(wave_sweep, "GpuSampler", fake_sampler(1890, 600.0))
    out = tmp_path / "waves.md"
    monkeypatch.setattr(sys, "argv", ["wave_sweep", "--bin", str(exe), "--case", "128:8192:2x16,1x33", "--rounds", "2",
                                      "--seconds", "0.001", "--no-cudnn", "--out", str(out)])
    wave_sweep.main()
    rows = [ln for ln in out.read_text().splitlines() if ln.startswith("| 128")]
    assert rows == ["| 128 | 8192 | 2x16 | 15.52 | 600.0, 600.0 | - | 1890, 1890 |",
                    "| 128 | 8192 | 1x33 | 16.00 | 620.0, 620.0 | - | 1890, 1890 |"]


@pytest.mark.parametrize("slots,wgs", [(16, 2), (32, 2), (56, 4), (56, 2)])
def test_tile_timeline_phases_from_a_dump(tmp_path, monkeypatch, slots, wgs):
    """A synthetic probe dump (two CTAs, three tiles each, fixed offsets) gives back those offsets; the
    32-slot form (12 per warpgroup) also its epilogue's parts and the ring's read; the 56-slot form
    (session 36) all four consumer warpgroups of d 64's short tiles, or the two of a kernel with two,
    and the Q slices' issues in its last four slots either way."""
    import gzip
    import struct

    tile_timeline = pytest.importorskip("tile_timeline")
    grid_, max_tiles = 2, 64
    stride = 6 if slots == 16 else 12
    vals = [0] * (grid_ * max_tiles * slots)
    offsets = [0, 600, 1500, 1860, 11700, 13300]  # tile start, Q's wait, S issued, S done, last P V, epilogue
    # slots 6-10: LSE stored, O in smem, O's barrier, ring read (before the tile's start), sO's WAR barrier
    offsets += [12000, 12600, 12900, -400, 12200] if stride == 12 else []
    for cta in range(grid_):
        t = 100000
        for k in range(3):
            base = (cta * max_tiles + k) * slots
            vals[base + 0], vals[base + 1], vals[base + 2], vals[base + 3] = t - 3000, t - 1500, t + 9000, cta
            for wg in range(wgs):
                for i, dt in enumerate(offsets):
                    vals[base + 4 + stride * wg + i] = t + dt + 700 * wg
                if slots == 56:  # the producer's issue of warpgroup wg's Q slice
                    vals[base + 52 + wg] = t - 250 + 700 * wg + 10 * wgs
            t += 14400
    raw = struct.pack("<8q", grid_, slots, max_tiles, 128 * wgs // 2, 128, wgs, 1, 512) + struct.pack(f"<{len(vals)}Q", *vals)
    # The 56-slot dump as the results folders keep them (gzip), the others plain.
    dump = tmp_path / ("tl.bin.gz" if slots == 56 else "tl.bin")
    dump.write_bytes(gzip.compress(raw) if slots == 56 else raw)
    out = tmp_path / "tl.md"
    monkeypatch.setattr(sys, "argv", ["tile_timeline", str(dump), "--md", str(out), "--label", "synthetic"])
    tile_timeline.main()
    text = out.read_text()
    assert f"{wgs} consumer warpgroups, persistent, seqlen_k 512, 6 tiles recorded" in text
    assert "| tile start -> Q wait returned |" + " 600 |" * wgs in text
    assert "| first S complete -> last P V complete |" + " 9840 |" * wgs in text
    # Q wait returned -> last P V complete: 11100 of each tile; the CTA's span: 2 x 14400 + 13300
    assert f"| warpgroup {wgs - 1}: Q wait returned -> last P V complete, share of the CTA's span | 0.791 |" in text
    if slots == 56:
        lead = 250 - 10 * wgs
        assert f"| producer: warpgroup {wgs - 1}'s Q slice issued before its tile start | {lead} |" in text
        assert f"| producer: warpgroup {wgs - 1}'s Q slice issued -> its Q wait returned | {lead + 600} |" in text
        assert f"warpgroup {wgs}'s Q slice" not in text
    else:
        assert "Q slice" not in text
    assert "| warpgroup 0: epilogue done -> next tile's start (CTA) | 1100 |" in text
    assert "| producer: Q issued before warpgroup 0's tile start | 1500 |" in text
    if stride == 12:
        assert "|   last P V complete -> finalize, LSE stored | 300 | 300 |" in text
        assert "|   LSE stored -> sO's WAR barrier passed | 200 | 200 |" in text
        assert "|   -> O in smem (stmatrix issued) | 400 | 400 |" in text
        assert "|   O's barrier passed -> epilogue done (TMA store issued) | 400 | 400 |" in text
        assert "| tile index read from the ring -> tile start (decode, tile set-up) | 400 | 400 |" in text
        assert "| warpgroup 0: epilogue done -> next tile's index read from the ring | 700 |" in text
    else:
        assert "finalize" not in text and "from the ring" not in text


def test_ncu_regions_table_from_a_source_page(tmp_path):
    """A synthetic ncu source page: the innermost loop around the largest HGMMA group, by region."""
    ncu_regions = pytest.importorskip("ncu_regions")
    header = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Warp Stall Sampling (Not-issued Samples)",
              "Instructions Executed", "stall_barrier", "stall_wait", "stall_barrier (Not Issued)"]
    body = [("SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R2", 3, 10, 0, 3)]  # before the loop
    body += [("BAR.SYNC.DEFER_BLOCKING R10, 0x100", 40, 100, 40, 0)]  # loop head: the turn
    body += [("HGMMA.64x128x16.F32.BF16 R24, gdesc[UR20], R24", 2, 100, 0, 2)] * 16
    body += [("WARPGROUP.DEPBAR.LE gsb0, 0x1", 30, 100, 30, 0),
             ("FFMA R1, R2, R3, R4", 5, 6400, 0, 5), ("MUFU.EX2 R1, R1", 20, 6400, 0, 20),
             ("FMNMX R5, R5, R6, !PT", 10, 6400, 0, 10), ("VOTE.ALL P0, P0", 4, 100, 0, 4),
             ("F2FP.BF16.F32.PACK_AB R7, R8, R9", 3, 3200, 0, 3), ("IMAD R9, R9, 0x2, RZ", 1, 100, 0, 1)]
    rows = [[f"{0x1000 + 16 * i:#x}", s, str(n), "0", str(ex), str(b), str(w), "0"] for i, (s, n, ex, b, w) in
            enumerate(body)]
    head = rows[1][0]
    rows.append([f"{0x1000 + 16 * len(body):#x}", f"@P1 BRA {head}", "1", "0", "100", "0", "1", "0"])
    rows.append([f"{0x1000 + 16 * len(body) + 16:#x}", f"@P2 BRA {rows[0][0]}", "7", "0", "1", "0", "7", "0"])  # outer
    page = tmp_path / "src.csv"
    with open(page, "w") as f:
        f.write('==PROF== Connected to process 1\nflashcute bench: (program output)\n"Kernel Name","k"\n')
        f.write(",".join(f'"{c}"' for c in header) + "\n")
        for r in rows:
            f.write(",".join(f'"{c}"' for c in r) + "\n")
    text = ncu_regions.report(ncu_regions.read_rows(str(page)), "synthetic", 3)
    # 156 samples in all, 146 in the loop (the 3 before it and the outer branch's 7 are not)
    assert "25 instructions, 146 of the kernel's 156 samples (93.6%)" in text
    assert "| wgmma issue (stage waits, turn, descriptors, HGMMA) | 72 | 49.3% | 1700 | barrier 40, wait 32 |" in text
    assert "| wgmma waits | 30 | 20.5% | 100 | barrier 30 |" in text
    assert "| exps (FFMA, MUFU, FADD) | 25 | 17.1% | 12800 | wait 25 |" in text
    assert "| max (FMNMX) | 10 | 6.8% | 6400 | wait 10 |" in text
    assert "| other | 2 | 1.4% | 200 | wait 2 |" in text  # IMAD and the loop's own branch
    assert "| +0x0 | 40 | `BAR.SYNC.DEFER_BLOCKING R10, 0x100` | barrier 40 |" in text


def _sass_dump(functions):
    """A cuobjdump --dump-sass text: {(arch, name): [instruction, ...]}."""
    out = []
    for arch in sorted({a for a, _ in functions}):
        out += ["", "Fatbin elf code:", "================", f"arch = {arch}", "code version = [1,8]", "",
                f"\tcode for {arch}"]
        for (a, name), insns in functions.items():
            if a != arch:
                continue
            out.append(f"\t\tFunction : {name}")
            out.append("\t.headerflags\t@\"EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)\"")
            for n, insn in enumerate(insns):
                out.append(f"        /*{16 * n:04x}*/                   {insn} ;   /* 0x{n:016x} */")
                out.append("                                                      /* 0x000fe20000000f00 */")
    return "\n".join(out) + "\n"


def test_sass_diff_matches_functions_and_counts_opcodes(tmp_path, capsys):
    """Functions matched by (arch, name); encodings ignored; opcode counts past predicates."""
    sass_diff = pytest.importorskip("sass_diff")
    loop = ["HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT", "MUFU.EX2 R1, R2", "FMNMX R3, R3, R4, !PT",
            "@!P0 BRA 0x40", "EXIT"]
    a = {("sm_90a", "kern_a"): loop, ("sm_90a", "kern_b"): loop, ("sm_90", "kern_b"): loop[:2],
         ("sm_90a", "gone"): ["EXIT"]}
    b = {("sm_90a", "kern_a"): loop,  # same instructions, other encodings (the dump's n differs below)
         ("sm_90a", "kern_b"): loop[:2] + ["@P1 MUFU.EX2 R5, R6", "STL [R1], R2", "BAR.SYNC.DEFER_BLOCKING 0x1"] + loop[3:],
         ("sm_90", "kern_b"): loop[:2], ("sm_90a", "new"): ["EXIT"]}
    pa, pb = tmp_path / "a.sass", tmp_path / "b.sass"
    pa.write_text(_sass_dump(a))
    pb.write_text(_sass_dump(b).replace("/* 0x0000000000000000 */", "/* 0x1111111111111111 */"))
    parsed = sass_diff.parse(pa.read_text())
    assert parsed[("sm_90a", "kern_a")] == loop and parsed[("sm_90", "kern_b")] == loop[:2]
    assert sass_diff.main([str(pa), str(pb)]) == 0
    text = capsys.readouterr().out
    assert "5 functions: 2 identical, 1 differs, 1 only in A, 1 only in B" in text
    assert "| 0 | identical | sm_90 | 2 / 2 |  |" in text
    assert "| 1 | only in A | sm_90a | 1 / 0 |  |" in text
    assert "| 4 | only in B | sm_90a | 0 / 1 |  |" in text
    assert "| 3 | differs | sm_90a | 5 / 7 | MUFU.EX2 1 -> 2, FMNMX 1 -> 0, STL 0 -> 1, BAR 0 -> 1 |" in text
    assert "- 3: `kern_b`" in text
    assert sass_diff.main([str(pa), str(pb), "--match", "^kern_a$", "--expect", "changed"]) == 1
    assert sass_diff.main([str(pa), str(pb), "--match", "^kern_a$", "--expect", "same"]) == 0
    assert sass_diff.main([str(pa), str(pb), "--match", "kern", "--expect", "same"]) == 1
    assert sass_diff.main([str(pa), str(pb), "--match", "nothing"]) == 1


def test_sass_diff_pairs_renamed_functions(tmp_path, capsys):
    """--renamed: a function in A only and one in B only with the same instructions are one row."""
    sass_diff = pytest.importorskip("sass_diff")
    body = ["HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT", "EXIT"]
    a = {("sm_90a", "kern_Li0E"): body, ("sm_90a", "other_old"): ["NOP", "EXIT"]}
    b = {("sm_90a", "kern_Li0ELi0E"): body, ("sm_90a", "other_new"): ["EXIT"]}
    pa, pb = tmp_path / "a.sass", tmp_path / "b.sass"
    pa.write_text(_sass_dump(a))
    pb.write_text(_sass_dump(b))
    assert sass_diff.main([str(pa), str(pb), "--expect", "same"]) == 1  # by name: four one-sided
    assert "4 functions: 2 only in A, 2 only in B" in capsys.readouterr().out
    assert sass_diff.main([str(pa), str(pb), "--renamed", "--match", "^kern", "--expect", "same"]) == 0
    text = capsys.readouterr().out
    assert "1 functions: 1 renamed" in text and "| 0 | renamed | sm_90a | 2 / 2 |  |" in text
    assert sass_diff.main([str(pa), str(pb), "--renamed", "--expect", "same"]) == 1  # other_*: not paired
    assert "3 functions: 1 renamed, 1 only in A, 1 only in B" in capsys.readouterr().out


# ---- bench/device_lib.sh (the device calls' helpers) ------------------------------------------------
def test_device_lib_counts_checks_and_writes_args(tmp_path):
    """chk / chk_std / tally / bins on a stub `flashcute` whose exit status fails one case (seqlen 1000);
    chk's dtype from DTYPE (bf16 unless set)."""
    for v in ("base", "x"):
        d = tmp_path / "bin" / v
        d.mkdir(parents=True)
        stub = d / "flashcute"
        stub.write_text('#!/usr/bin/env bash\n'
                        'echo "  check (4 heads vs fp64): max|out-golden| 0.001 (unfused $5: 0.001)"\n'
                        'case " $* " in *" --seqlen 1000 "*) exit 3 ;; esac\n')
        stub.chmod(0o755)
    script = f"""
        set -u
        source '{BENCH / "device_lib.sh"}'
        B='{tmp_path / "bin"}'; V=x
        bins base x > '{tmp_path}/bins.txt'
        chk_std 128 > '{tmp_path}/checks.txt'
        chk 64 "--seqlen 700" >> '{tmp_path}/checks.txt'
        tally '{tmp_path}/checks.txt'
        chk_std 96 || echo "rc=$?"
        DTYPE=fp16 chk 64 "--seqlen 500" > '{tmp_path}/fp16.txt'
        chk_masked64 > '{tmp_path}/masked.txt'
        chk_full64 > '{tmp_path}/full.txt'
    """
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    lines = (tmp_path / "checks.txt").read_text().splitlines()
    assert len(lines) == 22  # chk_std 128's 21 cases and one more
    failed = [ln for ln in lines if not ln.startswith("rc=0 ")]
    assert failed == [ln for ln in lines if "--seqlen 1000 " in ln] and len(failed) == 2
    assert all(ln.startswith("rc=3 d128 --seqlen 1000 ") for ln in failed)
    assert "max|out-golden| 0.001 (unfused bf16: 0.001)" in lines[0]
    assert "(unfused fp16: 0.001)" in (tmp_path / "fp16.txt").read_text()
    for name, count in (("masked.txt", 20), ("full.txt", 12)):
        got = (tmp_path / name).read_text().splitlines()
        assert len(got) == count and all(ln.startswith("rc=0 d64 --seqlen") for ln in got), name
    assert "checks.txt: 20 pass, 2 not" in out.stdout
    assert "rc=1" in out.stdout and "no standard list for d 96" in out.stderr
    assert (tmp_path / "bin" / "x" / "args").read_text() == "--fwd-workspace zeroed\n"
    bins_txt = (tmp_path / "bins.txt").read_text().split()
    assert bins_txt[0] == "base" and bins_txt[2] == "x" and len(bins_txt[1]) == 12


def test_device_lib_gtest_carried_runs_shards(tmp_path):
    """gtest_carried: the carried tarball's executables, a named one in SHARDS GoogleTest shards (the
    shard index and count reach it), one rc= line per run in gtest.txt, so that tally counts a failure."""
    import tarfile
    mk = tmp_path / "mk"
    mk.mkdir()
    (mk / "gpu_test_fwd_grid").write_text(
        '#!/bin/sh\necho "[  PASSED  ] 3 tests. shard $GTEST_SHARD_INDEX/$GTEST_TOTAL_SHARDS"\n')
    (mk / "gpu_test_bad").write_text('#!/bin/sh\necho "[  FAILED  ] 1 test."\nexit 1\n')
    for f in mk.iterdir():
        f.chmod(0o755)
    work = tmp_path / "work"
    (work / "build").mkdir(parents=True)
    with tarfile.open(work / "build" / "tests.tar.xz", "w:xz") as t:
        for f in sorted(mk.iterdir()):
            t.add(f, arcname=f.name)
    script = f"""
        set -u
        source '{BENCH / "device_lib.sh"}'
        O=out; mkdir -p $O/r
        gtest_carried gpu_test_fwd_grid:3
        tally $O/r/gtest.txt
    """
    out = subprocess.run(["bash", "-c", script], cwd=work, capture_output=True, text=True, check=True)
    lines = sorted((work / "out" / "r" / "gtest.txt").read_text().splitlines())
    assert len(lines) == 4
    assert lines[0].startswith("rc=0 gpu_test_fwd_grid shard 0/3 [  PASSED  ] 3 tests. shard 0/3")
    assert [ln.split()[3] for ln in lines[:3]] == ["0/3", "1/3", "2/3"]
    assert lines[3].startswith("rc=1 gpu_test_bad shard 0/1 [  FAILED  ]")
    assert "gtest.txt: 3 pass, 1 not" in out.stdout
    # TESTS_TAR names another tarball (e.g. a full-bucket build beside a variant's)
    other = tmp_path / "other"
    other.mkdir()
    (other / "gpu_test_other").write_text('#!/bin/sh\necho "[  PASSED  ] 7 tests."\n')
    (other / "gpu_test_other").chmod(0o755)
    with tarfile.open(work / "build" / "other.tar.xz", "w:xz") as t:
        t.add(other / "gpu_test_other", arcname="gpu_test_other")
    script2 = f"""
        set -u
        source '{BENCH / "device_lib.sh"}'
        O=out2; mkdir -p $O/r
        rm -rf build/t
        TESTS_TAR=build/other.tar.xz gtest_carried
    """
    subprocess.run(["bash", "-c", script2], cwd=work, capture_output=True, text=True, check=True)
    (line,) = (work / "out2" / "r" / "gtest.txt").read_text().splitlines()
    assert line.startswith("rc=0 gpu_test_other shard 0/1 [  PASSED  ] 7 tests.")


def test_device_lib_san_passes_sanitizer_options(tmp_path):
    """san: SAN_ARGS goes to compute-sanitizer before the program, the CLI's arguments after it; rc is the tool's."""
    stub_dir = tmp_path / "stub"
    stub_dir.mkdir()
    stub = stub_dir / "compute-sanitizer"
    stub.write_text('#!/usr/bin/env bash\necho "$*" > "$ARGS_FILE"\necho "========= ERROR SUMMARY: 0 errors"\n')
    stub.chmod(0o755)
    script = f"""
        set -u
        source '{BENCH / "device_lib.sh"}'
        cd '{tmp_path}'
        B=bin; V=x
        PATH='{stub_dir}':$PATH ARGS_FILE='{tmp_path}/a1.txt' SAN_ARGS="--kernel-name kns=fwd_kernel --launch-count 1" \\
          san racecheck 64 --seqlen 4100 --causal
        PATH='{stub_dir}':$PATH ARGS_FILE='{tmp_path}/a2.txt' san memcheck 128 --seqlen 7
    """
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    first, second = out.stdout.splitlines()
    assert first.startswith("rc=0 ") and "x racecheck [--kernel-name kns=fwd_kernel --launch-count 1] d64" in first
    assert "ERROR SUMMARY: 0 errors" in first
    assert "x memcheck d128 --seqlen 7" in second
    a1 = (tmp_path / "a1.txt").read_text().split()
    assert a1[:7] == ["--tool", "racecheck", "--error-exitcode", "1", "--kernel-name", "kns=fwd_kernel", "--launch-count"]
    assert a1[8:10] == ["bin/x/flashcute", "run"] and a1[-3:] == ["--seqlen", "4100", "--causal"]
    a2 = (tmp_path / "a2.txt").read_text().split()
    assert a2[:5] == ["--tool", "memcheck", "--error-exitcode", "1", "bin/x/flashcute"]


def test_device_lib_call_setup(tmp_path):
    """call_setup: O from $OUT with its r/ folder, the carried vbin tarball unpacked, B, gpu.txt written."""
    repo = tmp_path / "repo"
    (repo / "build" / "vbin" / "x").mkdir(parents=True)
    (repo / "build" / "vbin" / "x" / "flashcute").write_text("bin\n")
    subprocess.run(["tar", "cJf", "build/vbin.tar.xz", "-C", "build", "vbin/x"], cwd=repo, check=True)
    shutil.rmtree(repo / "build" / "vbin")
    script = f"""
        set -u
        source '{BENCH / "device_lib.sh"}'
        cd '{repo}'
        OUT='{tmp_path}/out' call_setup
        echo "O=$O B=$B"
    """
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"O={tmp_path}/out B=build/vbin"
    assert (repo / "build" / "vbin" / "x" / "flashcute").read_text() == "bin\n"
    assert (tmp_path / "out" / "r" / "gpu.txt").is_file()


def test_device_lib_pack_and_steady_part(tmp_path):
    """pack rewrites the machine's paths in $O/r and packs it; steady_part runs ab_steady with its arguments."""
    out_dir = tmp_path / "out"
    (out_dir / "r").mkdir(parents=True)
    repo = tmp_path / "repo"
    repo.mkdir()
    (out_dir / "r" / "a.md").write_text(f"{repo}/bench/x.py wrote {out_dir}/r/a.md\n")
    (out_dir / "r" / "b.json").write_text(f"{repo}\n")  # not a text type pack rewrites
    (out_dir / "r" / "gc").mkdir()
    (out_dir / "r" / "gc" / "tests.log").write_text(f"{repo}/build {out_dir}/r/gc\n")  # a subfolder's text too
    stub_dir = tmp_path / "stub"
    stub_dir.mkdir()
    stub = stub_dir / "python3"
    # A stand-in for python3: records its arguments and writes the --out table ab_steady would.
    stub.write_text('#!/usr/bin/env bash\n'
                    'echo "$*" > "$ARGS_FILE"\n'
                    'while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; shift; done\n'
                    'printf "head\\n\\n| d | causal |\\n|---|---|\\n| 64 | yes | 2048 | 1.0 |\\n| 64 | no | 2048 | 0.9 |\\n" > "$out"\n')
    stub.chmod(0o755)
    script = f"""
        set -u
        source '{BENCH / "device_lib.sh"}'
        cd '{repo}'
        O='{out_dir}'; B=build/vbin
        PATH='{stub_dir}':$PATH ARGS_FILE='{tmp_path}/args.txt' steady_part ab64-fp16-yes2048 base,v1 1200 fp16 3 64:yes:2048
        pack
    """
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[0].startswith("ab64-fp16-yes2048 rc=0 (")
    assert out.stdout.splitlines()[1:] == ["| 64 | yes | 2048 | 1.0 |", "| 64 | no | 2048 | 0.9 |"]  # every data row
    args = (tmp_path / "args.txt").read_text().split()
    assert args[:1] == ["bench/ab_steady.py"]
    for flag, value in (("--variants", "base,v1"), ("--case", "64:yes:2048"), ("--iters", "1200"),
                        ("--dtype", "fp16"), ("--rounds", "3"), ("--peer", "sdpa_cudnn"), ("--bin-dir", "build/vbin"),
                        ("--records", f"{out_dir}/r/ab64-fp16-yes2048")):
        assert args[args.index(flag) + 1] == value
    assert (out_dir / "r" / "a.md").read_text() == "<repo>/bench/x.py wrote $OUT/r/a.md\n"
    assert (out_dir / "r" / "b.json").read_text() == f"{repo}\n"
    assert (out_dir / "r" / "gc" / "tests.log").read_text() == "<repo>/build $OUT/r/gc\n"
    with tarfile.open(out_dir / "r.tgz") as tf:
        names = set(tf.getnames())
    assert {"r/a.md", "r/b.json", "r/gc/tests.log", "r/ab64-fp16-yes2048.md", "r/ab64-fp16-yes2048.log"} <= names


def test_device_lib_gpu_check(tmp_path):
    """gpu_check: scripts/gpu-check with OUT at $O/r/gc, the steps, gtest runner and CMake arguments (default
    sm_90a), CUTLASS from a carried .deps/clp; its console in $O/r/gpucheck.log, the gzipped build log dropped,
    gpu-check's status returned."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    stub = repo / "scripts" / "gpu-check"
    stub.write_text('#!/usr/bin/env bash\n'
                    'echo "steps=[$FLASHCUTE_STEPS] runner=$FLASHCUTE_TEST_RUNNER cmake=[$FLASHCUTE_CMAKE_ARGS] '
                    'cutlass=${CUTLASS_DIR:-none} out=$OUT"\n'
                    'echo x | gzip > "$OUT/build.log.gz"; echo ok > "$OUT/tests.log"\n'
                    'exit 3\n')
    stub.chmod(0o755)
    script = f"""
        set -u
        source '{BENCH / "device_lib.sh"}'
        cd '{repo}'
        unset CUTLASS_DIR
        O='{tmp_path}/out'
        gpu_check; echo "returned $?"
        mkdir -p .deps/clp
        FLASHCUTE_STEPS=tests gpu_check -DFLASHCUTE_ARCHS=80 > /dev/null; echo "returned $?"
    """
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    assert lines[0].startswith("gpu-check rc=3 at ") and lines[-1] == "returned 3" and "returned 3" in lines
    log = (tmp_path / "out" / "r" / "gpucheck.log").read_text()
    assert log.strip() == (f"steps=[tests] runner=gtest cmake=[-DFLASHCUTE_ARCHS=80] cutlass={repo}/.deps/clp "
                           f"out={tmp_path}/out/r/gc")
    first = lines[1]
    assert first == f"steps=[build tests pytest] runner=gtest cmake=[-DFLASHCUTE_ARCHS=90a] cutlass=none out={tmp_path}/out/r/gc"
    assert (tmp_path / "out" / "r" / "gc" / "tests.log").read_text() == "ok\n"
    assert not (tmp_path / "out" / "r" / "gc" / "build.log.gz").exists()


def test_device_lib_left_and_prebuilt_module(tmp_path):
    """left: a step's seconds, capped so that it ends DEADLINE s into the call (at least 1). prebuilt_module:
    the carried library unpacked, cmake configured for the module alone on it and built, the log in
    $O/r/build.log, PYTHONPATH exported, cmake's status returned."""
    repo = tmp_path / "repo"
    (repo / "build").mkdir(parents=True)
    (repo / "build" / "libflashcute.a").write_text("lib\n")
    subprocess.run(["tar", "cJf", "build/lib90.tar.xz", "-C", "build", "libflashcute.a"], cwd=repo, check=True)
    stub_dir = tmp_path / "stub"
    stub_dir.mkdir()
    (stub_dir / "cmake").write_text('#!/usr/bin/env bash\necho "cmake $*" >> "$ARGS_FILE"\n'
                                    '[ "$1" = --build ] && exit "${BUILD_RC:-0}"; exit 0\n')
    (stub_dir / "cmake").chmod(0o755)
    script = f"""
        set -u
        source '{BENCH / "device_lib.sh"}'
        cd '{repo}'
        O='{tmp_path}/out'; mkdir -p "$O/r"
        SECONDS=100; DEADLINE=300 left 150; SECONDS=100; DEADLINE=200 left 150
        SECONDS=100; DEADLINE=50 left 150; SECONDS=100; unset DEADLINE; left 150
        export PATH='{stub_dir}':$PATH ARGS_FILE='{tmp_path}/args.txt'
        prebuilt_module; echo "returned $? $PYTHONPATH"
        BUILD_RC=2 prebuilt_module > /dev/null; echo "returned $?"
    """
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    assert [int(x) for x in lines[:4]] == [150, 100, 1, 150]
    assert lines[4].startswith("build rc=0 (") and lines[5] == f"returned 0 {repo}/build/gpu/python"
    assert lines[6] == "returned 2"
    assert (repo / "build" / "prebuilt" / "libflashcute.a").read_text() == "lib\n"
    calls = (tmp_path / "args.txt").read_text().splitlines()
    configure = calls[0].split()
    assert f"-DFLASHCUTE_PREBUILT_LIBRARY={repo}/build/prebuilt/libflashcute.a" in configure
    for flag in ("-DFLASHCUTE_BUILD_PYTHON=ON", "-DFLASHCUTE_BUILD_TESTS=OFF", "-DFLASHCUTE_BUILD_APPS=OFF"):
        assert flag in configure
    assert calls[1].split()[1:5] == ["--build", "build/gpu", "--target", "flashcute_ext"]
    assert (tmp_path / "out" / "r" / "build.log").is_file()


def test_git_revision(tmp_path):
    """The commit recorded in bench.py's and ncu_pairs.py's meta: None outside a repository, the short
    hash of a clean tree, and "+dirty" once a tracked file differs from it."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    assert grid.git_revision(str(tmp_path)) is None
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    (tmp_path / "f").write_text("a")
    for cmd in (["init", "-q"], ["add", "f"], ["commit", "-qm", "x"]):
        subprocess.run(["git", "-C", str(tmp_path), *cmd], check=True, env=env)
    head = subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert grid.git_revision(str(tmp_path)) == head
    (tmp_path / "f").write_text("b")
    assert grid.git_revision(str(tmp_path)) == head + "+dirty"


def test_sm90_targets_ours_picks_an_ab_steady_variant(tmp_path, capsys):
    """--ours flashcute_sm90:eqs makes that variant's records ours (the first variant's are dropped)."""
    import json
    import sm90_targets

    def rec(impl, tflops):
        return {"pass": "fwd", "status": "ok", "impl": impl, "dtype": "bf16", "d": 128, "causal": False,
                "seqlen": 512, "tflops": tflops}

    res = tmp_path / "steady-round0.json"
    res.write_text(json.dumps({"meta": {"runs": [{"date": "d", "git": "g"}]},
                               "records": [rec("flashcute_sm90", 450.0), rec("flashcute_sm90:eqs", 500.0),
                                           rec("sdpa_cudnn", 480.0)]}))
    fa3 = tmp_path / "peers.json"
    fa3.write_text(json.dumps({"rows": [{"d": 128, "causal": False, "seqlen": 512,
                                         "fwd": {"fa3": 300.0, "cudnn": 480.0, "fa2": 250.0}}]}))
    rows = {}
    for ours in ("flashcute_sm90", "flashcute_sm90:eqs"):
        sm90_targets.main([str(res), "--fa3-json", str(fa3), "--ours", ours])
        (rows[ours],) = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("| bf16")]
    assert rows["flashcute_sm90"].startswith("| bf16 | 128 | no | 512 | 450 | 480 | 0.94 |")
    assert rows["flashcute_sm90:eqs"].startswith("| bf16 | 128 | no | 512 | 500 | 480 | 1.04 |")
    assert rows["flashcute_sm90:eqs"].endswith("| yes |")
    with pytest.raises(SystemExit):  # a variant the records do not have is an error, not an empty table
        sm90_targets.main([str(res), "--fa3-json", str(fa3), "--ours", "flashcute_sm90:nope"])
    assert "has no records of flashcute_sm90:nope" in capsys.readouterr().err


def test_sm90_standing_takes_each_rows_latest_run(tmp_path, capsys):
    """sm90_standing.py: per row the latest run (records' date, or a log source's manifest date) of the
    manifest's sources wins, `exclude` drops rows, a log's variant lines are read, thin and single-round rows
    are flagged, and a row no source covers is listed as such."""
    import json
    import sm90_standing

    def rec(impl, tflops, seqlen, d=128):
        return {"pass": "fwd", "status": "ok", "impl": impl, "dtype": "bf16", "d": d, "causal": False,
                "seqlen": seqlen, "tflops": tflops}

    def write(name, date, rnd, records):
        (tmp_path / name).write_text(json.dumps({"meta": {"runs": [{"date": date, "git": f"ab_steady round {rnd}"}]},
                                                 "records": records}))

    # old run (2 rounds): 512 met (1.05, 1.10), 2048 not (1.00, 1.00), 4096 (1.20, 1.30: met, later excluded)
    for rnd, (a, b, c) in enumerate(((420.0, 400.0, 480.0), (440.0, 400.0, 520.0))):
        write(f"old-round{rnd}.json", "2026-01-01T00:00:00Z", rnd,
              [rec("flashcute_sm90", a, 512), rec("sdpa_cudnn", 400.0, 512), rec("flashcute_sm90", b, 2048),
               rec("sdpa_cudnn", 400.0, 2048), rec("flashcute_sm90", c, 4096), rec("sdpa_cudnn", 400.0, 4096)])
    # new run, variant eqs is main's: 512 now below (0.95, 1.02: not met on the median 0.985), 2048 thin
    for rnd, (a, b) in enumerate(((380.0, 400.0), (408.0, 460.0))):
        write(f"new-round{rnd}.json", "2026-01-02T00:00:00Z", rnd,
              [rec("flashcute_sm90", 999.0, 512), rec("flashcute_sm90:eqs", a, 512), rec("sdpa_cudnn", 400.0, 512),
               rec("flashcute_sm90:eqs", b, 2048), rec("sdpa_cudnn", 400.0, 2048)])
    # a log with one round at d 64 2048 (met, single round); the other variant's line is ignored
    (tmp_path / "run.log").write_text("ab_steady: round 0 (64, False, 2048) grid: 450.0 TFLOP/s\n"
                                      "ab_steady: round 0 (64, False, 2048) other: 900.0 TFLOP/s\n"
                                      "ab_steady: round 0 (64, False, 2048) sdpa_cudnn: 400.0 TFLOP/s\n")
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"sources": [
        {"id": "old", "what": "o", "records": ["old-round*.json"], "ours": "flashcute_sm90",
         "exclude": [{"d": 128, "seqlen_min": 4096, "why": "changed"}]},
        {"id": "new", "what": "n", "records": ["new-round*.json"], "ours": "flashcute_sm90:eqs"},
        {"id": "log", "what": "l", "log": "run.log", "dtype": "bf16", "ours": "grid", "date": "2026-01-01T00:00:00Z"}]}))
    fa3 = tmp_path / "peers.json"
    fa3.write_text(json.dumps({"rows": [{"d": d, "causal": False, "seqlen": s, "fwd": {"fa3": 100.0, "cudnn": 100.0}}
                                        for d, s in ((128, 512), (128, 2048), (128, 4096), (64, 2048))]}))
    sm90_standing.main([str(manifest), "--fa3-json", str(fa3)])
    out = capsys.readouterr().out
    rows = {tuple(ln.split(" | ")[:4]): ln for ln in out.splitlines() if ln.startswith("| bf16")}
    assert rows[("| bf16", "128", "no", "512")].endswith("| 0.985 | 0.950, 1.020 | 1.00 | 1.000 | 400 | no | `new` |")
    assert rows[("| bf16", "128", "no", "2048")].endswith("| 1.075 | 1.000, 1.150 | 1.00 | 1.050 | 420 | yes (thin) | `new` |")
    assert rows[("| bf16", "128", "no", "4096")].endswith("| no measurement | – |")
    assert rows[("| bf16", "64", "no", "2048")].endswith("| 1.125 | 1.125 | 1.00 | 1.050 | 420 | yes (1 round) | `log` |")
    assert "**2 of 8 rows met**" in out and "1 thin" in out and "1 from a single round: **0 of 8**" in out
    assert "Rows without a measurement: 5." in out  # the four fp16 rows, and d 128 4096 (excluded)
    assert "ask ours for" not in out
    # two or more rounds only: d 64 2048 (the log's one round) has no measurement; 512 and 2048 keep `new`
    assert "two or more rounds of it instead (a single-round run skipped): **1 of 8** met; 6 rows then" in out
    sm90_standing.main([str(manifest), "--fa3-json", str(fa3), "--gemm", "400"])  # 512 (needs 400) is unmet
    assert "1 of the unmet rows ask ours for at least 400 TFLOP/s" in capsys.readouterr().out
    # a locked-clock table (session 71's ceiling.md form) beside the rows, less its `exclude`
    (tmp_path / "ceiling.md").write_text(
        "| bf16 | 128 | no | 512 | 1.050 | 1.00 | yes | 55.5 | 96.0 | 50.0 | 96.0 | 1.97 | yes |\n"
        "| bf16 | 128 | no | 2048 | 1.100 | 1.05 | yes | 80.0 | 96.0 | 70.0 | 96.0 | 1.43 | yes |\n"
        "| bf16 | 64 | no | 2048 | 1.166 | 1.26 | no | 97.4 | 95.7 | 83.3 | 96.4 | 1.25 | **no** |\n")
    with_locked = json.loads(manifest.read_text())
    with_locked["locked"] = {"path": "ceiling.md", "what": "w", "exclude": [{"d": 128, "seqlen_max": 1024, "why": "x"}]}
    (tmp_path / "m2.json").write_text(json.dumps(with_locked))
    sm90_standing.main([str(tmp_path / "m2.json"), "--fa3-json", str(fa3)])
    rows2 = {tuple(ln.split(" | ")[:4]): ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("| bf16")}
    assert rows2[("| bf16", "128", "no", "2048")].endswith("| yes (thin) | `new` | 1.100 / 80.0 / 1.43 |")
    assert rows2[("| bf16", "128", "no", "512")].endswith("| no | `new` | – |")  # excluded
    assert rows2[("| bf16", "64", "no", "2048")].endswith("| `log` | 1.166 / 97.4 / 1.25 |")  # an unreachable row
    good = manifest.read_text()
    for i, ours in ((1, "flashcute_sm90:nope"), (2, "nope")):  # a source without its `ours` impl is an error
        bad = json.loads(good)
        bad["sources"] = [dict(bad["sources"][i], ours=ours)]
        manifest.write_text(json.dumps(bad))
        with pytest.raises(SystemExit, match="nope"):
            sm90_standing.main([str(manifest), "--fa3-json", str(fa3)])
    manifest.write_text(good)
