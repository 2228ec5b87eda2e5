import json, sys, glob, bisect, collections
for d in sys.argv[1:]:
    res = collections.defaultdict(lambda: [0,0])
    for f in glob.glob(f'/tmp/s4/{d}/[0-9]*.json'):
        s = json.load(open(f))
        if len(s['writes']) < 50: continue
        st = sorted(w[0] for w in s['writes'].values()); en = sorted(w[-1] for w in s['writes'].values())
        acc = sorted(t for t, w in s['marks'] if w in ('accept', 'shed'))
        for w in s['writes'].values():
            for i in range(1, len(w)):
                t = w[i]; act = bisect.bisect_right(st, t) - bisect.bisect_right(en, t)
                j = bisect.bisect_left(acc, w[i-1] - 1000); ramp = j < len(acc) and acc[j] <= t
                k = (min(act // 50 * 50, 250), 'ramp' if ramp else 'calm')
                res[k][0] += 1; res[k][1] += (t - w[i-1]) > 75
    print(d, ' '.join(f'{a}-{r}:{n}/{b/n*100:.1f}%' for (a, r), (n, b) in sorted(res.items())))
