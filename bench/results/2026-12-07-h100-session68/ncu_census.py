"""Thread instructions per score, by class, from ncu's SourceCounters CSVs (device4.sh; call4/ncu.tgz).

    tar xzf call4/ncu.tgz   # n/<tag>.csv
    python3 ncu_census.py n d64nc8k=1073741824 d64c8k=536870912 ...   # TAG=number of scores
"""
import csv, sys, re, collections
def load(path):
    rows = list(csv.reader(open(path)))
    hdr = rows[1]; i_src = hdr.index("Source"); i_w = hdr.index("Instructions Executed"); i_t = hdr.index("Thread Instructions Executed")
    i_s = hdr.index("Warp Stall Sampling (All Samples)")
    out = []
    for r in rows[2:]:
        if len(r) <= i_t: continue
        src = r[i_src].strip()
        m = re.match(r"(@!?U?P\w+\s+)?([A-Z0-9_]+(\.[A-Z0-9_]+)*)", src)
        if not m: continue
        op = m.group(2)
        out.append((op, int(r[i_w] or 0), int(r[i_t] or 0), int(r[i_s] or 0), src))
    return out
def cls(op):
    base = op.split(".")[0]
    if base == "HGMMA": return op.split(".")[0] + "." + op.split(".")[1]
    if base == "MUFU": return "MUFU." + op.split(".")[1]
    if base in ("FFMA","FMUL","FADD","FMNMX","F2FP","SHFL","FSETP","FSEL"): return base
    if base.startswith("U") or base in ("R2UR","VOTEU"): return "uniform/R2UR"
    if base in ("IMAD","IADD3","LOP3","SHF","LEA","VIADD","PRMT","MOV","SEL","ISETP","PLOP3","P2R","R2P","VOTE","IMNMX","I2F","F2I","FRND","IABS"): return "int/vector"
    if base in ("BRA","EXIT","RET","CALL","BSSY","BSYNC","WARPSYNC","NOP","YIELD","BAR","SYNCS","WARPGROUP","ELECT","DEPBAR","MEMBAR","FENCE","ACQBULK","CCTL","ERRBAR","ACQSHMINIT"): return "control/sync"
    return "other:" + base
folder = sys.argv[1]
for tag, scores in [(a.split("=")[0], float(a.split("=")[1])) for a in sys.argv[2:]]:
    ins = load(f"{folder}/{tag}.csv")
    agg = collections.Counter(); warp = 0; thr = 0
    for op, w, t, s, src in ins:
        agg[cls(op)] += t; thr += t
    print(f"## {tag}: {thr/scores:.2f} thread instructions per score (scores {scores:.3g})")
    for k, v in sorted(agg.items(), key=lambda kv: -kv[1]):
        if v / scores >= 0.005: print(f"  {k:16s} {v/scores:6.3f}")
