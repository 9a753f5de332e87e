#!/usr/bin/env python3
"""Groups the rows of an ab_compare.py table (whole input below and from 2^24,
segmented/rows, axes, statistics): per group the rows, the median, least and
greatest ratio and how many lie outside +-2%. Usage: ab_groups.py TABLE.md"""
import sys,re,statistics
rows=[]
for line in open(sys.argv[1]):
    m=re.match(r'\| (\S+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+)',line)
    if m: rows.append((m.group(1),float(m.group(2)),float(m.group(3)),float(m.group(4))))
def cat(k):
    f=k.split(',')
    if re.match(r'^(f32|f64)$',f[0]) and len(f)==3:
        n=int(f[2]); return 'whole-input < 2^24' if n<2**24 else 'whole-input >= 2^24'
    if 'rows' in f[0] or 'segments' in f[0]: return 'segmented/rows'
    if len(f)>=4 and f[3] in ('var','std','var_f64','logsumexp','count_nonzero','any_nan'): return 'statistics'
    return 'axes'
g={}
for k,a,b,r in rows: g.setdefault(cat(k),[]).append(r)
print("| group | rows | median new/old | min | max | outside ±2% |")
print("|---|---:|---:|---:|---:|---:|")
for k,v in g.items():
    print(f"| {k} | {len(v)} | {statistics.median(v):.3f} | {min(v):.3f} | {max(v):.3f} | {sum(1 for x in v if abs(x-1)>0.02)} |")
