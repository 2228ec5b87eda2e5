import json, sys, glob, bisect, random
d = sys.argv[1]
servers = {}
for f in glob.glob(f'{d}/[0-9]*.json'):
    s = json.load(open(f))
    if s['writes']: servers[s['pid']] = s
for pid, s in servers.items():
    ev = {}
    for t, w in s['marks']: ev.setdefault(w, []).append(t)
    for k in ev: ev[k].sort()
    gcs = sorted(s['gcs'])
    gaps = []
    for turn, w in s['writes'].items():
        for i in range(1, len(w)): gaps.append((w[i-1], w[i]))
    lo = min(a for a, b in gaps); hi = max(b for a, b in gaps)
    def feats(a, b):
        r = {}
        for k, ts in ev.items(): r[k] = bisect.bisect_right(ts, b) - bisect.bisect_left(ts, a)
        r['gc'] = sum(ms for t, ms, kind in gcs if a <= t <= b)
        r['gcmaj'] = sum(ms for t, ms, kind in gcs if a <= t <= b and kind in (2,4))
        return r
    big = [g for g in gaps if g[1]-g[0] > 75]
    norm = random.sample([g for g in gaps if g[1]-g[0] <= 75], 3000)
    def summarize(name, gs):
        fs = [feats(a, b) for a, b in gs]
        keys = sorted(set(k for f in fs for k in f))
        out = {k: (round(sum(1 for f in fs if f.get(k,0) > 0)/len(fs)*100), round(sum(f.get(k,0) for f in fs)/len(fs),2)) for k in keys}
        print(f' {pid} {name} n={len(gs)} share with any / mean:', out)
    summarize('gaps>75', random.sample(big, min(3000, len(big))))
    summarize('gaps<=75', norm)
    # gaps > 75 in a stretch with no accept/shed within 1 s before
    acc = sorted(ev.get('accept', []) + ev.get('shed', []))
    def quiet(a, b):
        i = bisect.bisect_left(acc, a - 1000); return i >= len(acc) or acc[i] > b
    q = [g for g in gaps if quiet(*g)]
    print(f' {pid} no accept/shed within 1 s: gaps {len(q)}, >75 {sum(1 for a,b in q if b-a>75)} ({sum(1 for a,b in q if b-a>75)/max(1,len(q))*100:.2f}%); otherwise gaps {len(gaps)-len(q)}, >75 {len(big)-sum(1 for a,b in q if b-a>75)} ({(len(big)-sum(1 for a,b in q if b-a>75))/max(1,len(gaps)-len(q))*100:.2f}%)')
