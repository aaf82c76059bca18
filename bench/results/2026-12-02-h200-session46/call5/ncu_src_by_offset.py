#!/usr/bin/env python3
"""Stall samples of an ncu source-page CSV (gzip) by kernel offset, and the most sampled instructions
outside one loop (offsets lo..hi, here the d 64 short-tile kernel's key-block loop from cuobjdump).

    python3 ncu_src_by_offset.py ncu-src-d64-c512.csv.gz
"""
import csv,gzip,collections,sys
with gzip.open(sys.argv[1],"rt") as f:
    lines=[l for l in f if l.startswith('"')]
rd=list(csv.reader(lines)); rd=rd[1:]; hdr=rd[0]; ix={h:i for i,h in enumerate(hdr)}
stalls=[h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
num=lambda x: int(x.replace(",","") or 0) if x not in ("-","") else 0
rows=[]
for r in rd[1:]:
    a=int(r[ix["Address"]],16)
    rows.append((a,r[ix["Source"]].strip(),num(r[ix["Warp Stall Sampling (All Samples)"]]),r))
rows.sort(); base=rows[0][0]; total=sum(x[2] for x in rows)
lo,hi=0x4c30,0x7210; rel=lambda a:a-base
print("instructions",len(rows),"samples",total,"loop",sum(s for a,_,s,_ in rows if lo<=rel(a)<=hi))
w=collections.Counter()
for a,src,s,_ in rows: w[rel(a)//0x400]+=s
print("| kernel offsets | samples | share |"); print("|---|---|---|")
for k,v in sorted(w.items()):
    if v>=150: print(f"| {hex(k*0x400)}-{hex(k*0x400+0x3ff)} | {v} | {100*v/total:.1f}% |")
print()
print("| offset | samples | instruction | top stalls |"); print("|---|---|---|---|")
top=sorted([x for x in rows if not (lo<=rel(x[0])<=hi)], key=lambda x:-x[2])[:30]
for a,src,s,r in top:
    st=sorted(((num(r[ix[h]]),h[6:]) for h in stalls),reverse=True)[:2]
    print(f"| {hex(rel(a))} | {s} | `{src[:70]}` | {', '.join(f'{n} {c}' for c,n in st)} |")
