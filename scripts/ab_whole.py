"""Same-call A/B of whole-input `bench` CSVs against CUB:
python3 scripts/ab_whole.py DIR V1 V2 ... reads DIR/cub_*.csv (`cub_reduce.cu`
runs) and DIR/{V}_*.csv (one `bench` run per round) and prints, per cell of
the speed issue's table, the median over rounds of each variant and of CUB,
the ratios (* above the target), the last variant over the first, and the
count of cells above target."""
import sys, glob, statistics as st
folder = sys.argv[1]
def load(f, impl):
    d = {}
    for line in open(f):
        if line.startswith('#') or not line.strip(): continue
        c = line.strip().split(',')
        if c[0] != impl: continue
        d[(c[1], c[2], int(c[3]))] = float(c[4])
    return d
cub = [load(f, 'cub') for f in sorted(glob.glob(f'{folder}/cub_*.csv'))]
variants = {v: [load(f, 'reduce') for f in sorted(glob.glob(f'{folder}/{v}_*.csv'))] for v in sys.argv[2:]}
target = {1024: .95, 65536: .75, 1048576: .80, 16777216: .88, 100000000: .90, 268435456: 1.0, 1073741824: 1.0}
ops = ('sum', 'max', 'min', 'product')
names = list(variants)
print('| type | op | n | CUB µs | ' + ' | '.join(f'{v} µs' for v in names) + ' | ' + ' | '.join(f'{v}/CUB' for v in names) + f' | {names[-1]}/{names[0]} |')
print('|---|---|---:|---:|' + '---:|' * (2 * len(names) + 1))
above = {v: 0 for v in names}; cells = 0
rel = {}
for key in sorted(cub[0], key=lambda k: (k[0], ops.index(k[1]) if k[1] in ops else 9, k[2])):
    t, op, n = key
    if op not in ops or n not in target or t not in ('f32', 'i32', 'f64', 'i64'): continue
    if not all(key in v[0] for v in variants.values()): continue
    c = st.median([x[key] for x in cub if key in x])
    meds = {v: st.median([r[key] for r in runs]) for v, runs in variants.items()}
    cells += 1
    for v in names:
        if meds[v] / c > target[n]: above[v] += 1
    r = meds[names[-1]] / meds[names[0]]
    rel.setdefault(n, []).append(r)
    print(f'| {t} | {op} | {n} | {c:.2f} | ' + ' | '.join(f'{meds[v]:.2f}' for v in names) + ' | ' + ' | '.join(f'{meds[v]/c:.3f}' + ('*' if meds[v]/c > target[n] else '') for v in names) + f' | {r:.3f} |')
print()
print(f'cells above target (marked *), of {cells}: ' + ', '.join(f'{v} {above[v]}' for v in names))
print(f'{names[-1]}/{names[0]} by n (geometric mean over types and ops): ' + ', '.join(f'{n}: {st.geometric_mean(v):.3f}' for n, v in sorted(rel.items())))
