#!/usr/bin/env python3
"""Session 43's steady-state grid from ab_steady's logs (call 1's parts hit their timeouts before
writing --records, so the per-phase lines are the record): one bench.py results file per round, a
round's row kept where both ours (`grid`) and cuDNN ran in it. Call 2's single-round runs of the rows
call 1 left short count as round 1 (or round 0 where call 1 ran neither).

    python3 steady_logs.py OUT_PREFIX call1/steady-*.log call2/steady-*.log
"""
import json
import re
import sys

LINE = re.compile(r"ab_steady: round (\d) \((\d+), (True|False), (\d+)\) (\S+): ([0-9.]+) TFLOP/s")


def main():
    prefix, logs = sys.argv[1], sys.argv[2:]
    phases = {}  # (dtype, d, causal, s) -> [ {impl: tflops} per round ]
    for path in logs:
        dtype = re.search(r"steady-(bf16|fp16)-", path).group(1)
        by_round = {}
        for m in LINE.finditer(open(path).read()):
            r, d, c, s, name, tf = m.groups()
            by_round.setdefault(int(r), {}).setdefault((dtype, int(d), c == "True", int(s)), {})[name] = float(tf)
        for r in sorted(by_round):
            for key, got in by_round[r].items():
                if "grid" in got and "sdpa_cudnn" in got:
                    phases.setdefault(key, []).append(got)
    rounds = max(len(v) for v in phases.values())
    for r in range(rounds):
        recs = []
        for (dtype, d, causal, s), got in sorted(phases.items()):
            if r < len(got):
                for name, impl in (("grid", "flashcute_sm90"), ("sdpa_cudnn", "sdpa_cudnn")):
                    recs.append({"impl": impl, "pass": "fwd", "dtype": dtype, "d": d, "causal": causal, "seqlen": s,
                                 "status": "ok", "tflops": got[r][name]})
        doc = {"meta": {"runs": [{"date": "2026-12-01", "git": "e86b8c4 (main's kernels)",
                                  "method": f"ab_steady round {r}: 500 back-to-back launches per phase, no flush"}]},
               "records": recs}
        with open(f"{prefix}-round{r}.json", "w") as f:
            json.dump(doc, f, indent=1)
    missing = sorted(k for k, v in phases.items() if len(v) < 2)
    full = {(dt, d, c, s) for dt in ("bf16", "fp16") for d in (64, 128, 256) for c in (False, True)
            for s in (512, 1024, 2048, 4096, 8192, 16384)}
    print("rounds", rounds, "rows with 2 rounds", sum(len(v) >= 2 for v in phases.values()),
          "with 1", sum(len(v) == 1 for v in phases.values()), "with 0", len(full - set(phases)))
    need = {}
    for k in sorted(full):
        n = 2 - len(phases.get(k, []))
        if n > 0:
            need.setdefault((k[0], k[1]), []).append((k[2], k[3], n))
    for (dt, d), v in sorted(need.items()):
        print(dt, d, " ".join(f"{d}:{'yes' if c else 'no'}:{s}x{n}" for c, s, n in v))


if __name__ == "__main__":
    main()
