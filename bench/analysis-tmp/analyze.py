import json, sys, glob, os, collections
d = sys.argv[1]; port = sys.argv[2] if len(sys.argv) > 2 else '3985'
client = json.load(open(f'{d}/client-{port}.json'))
servers = {}
for f in glob.glob(f'{d}/[0-9]*.json'):
    s = json.load(open(f))
    if s['writes'] or s['marks']: servers[s['pid']] = s
turnpid = {}
for pid, s in servers.items():
    for t in s['writes']: turnpid[t] = pid
T0 = min(x['t0'] for x in client['dump'])
def pct(a, p):
    a = sorted(a); return a[min(len(a)-1, int(len(a)*p))] if a else float('nan')
cg = []; sg = []
for st in client['dump']:
    reads = sorted(set(st['deltas']))
    pid = turnpid.get(st['turn'])
    for i in range(1, len(reads)): cg.append((reads[i]-T0, reads[i]-reads[i-1], pid, st['turn']))
    w = servers[pid]['writes'][st['turn']] if pid else []
    for i in range(1, len(w)): sg.append((w[i]-T0, w[i]-w[i-1], pid, st['turn']))
print('client gaps n', len(cg), 'p50/p90/p99', [round(pct([g[1] for g in cg], p),1) for p in (.5,.9,.99)], '>75:', sum(g[1]>75 for g in cg))
print('server write gaps n', len(sg), 'p50/p90/p99', [round(pct([g[1] for g in sg], p),1) for p in (.5,.9,.99)], '>75:', sum(g[1]>75 for g in sg))
for pid in servers:
    c = [g for g in cg if g[2]==pid]; s=[g for g in sg if g[2]==pid]
    print(' pid', pid, 'client >75', sum(g[1]>75 for g in c), 'of', len(c), 'server >75', sum(g[1]>75 for g in s), 'of', len(s))
# model lateness
for pid, s in servers.items():
    l = [x[1] for x in s['lateness']]
    print('pid', pid, 'model lateness n', len(l), 'p50/p90/p99/max', [round(pct(l,p),1) for p in (.5,.9,.99)], round(max(l),1) if l else None,
          'stalls>15ms', len(s['stalls']), 'stall sum', round(sum(x[1] for x in s['stalls'])), 'gc n', len(s['gcs']), 'gc sum', round(sum(x[1] for x in s['gcs'])), 'gc max', round(max([x[1] for x in s['gcs']] or [0]),1),
          'gc major', sum(1 for x in s['gcs'] if x[2] in (2,4)), 'major sum', round(sum(x[1] for x in s['gcs'] if x[2] in (2,4)),1))
print('client stalls', len(client['stalls']), 'sum', round(sum(x[1] for x in client['stalls'])), 'max', round(max([x[1] for x in client['stalls']] or [0])))
# timeline per second
B = collections.defaultdict(lambda: collections.Counter())
for st in client['dump']:
    if st['deltas']:
        for sec in range(int((min(st['deltas'])-T0)//1000), int((max(st['deltas'])-T0)//1000)+1): B[sec]['active'] += 1
for t, g, pid, _ in cg:
    B[int(t//1000)]['cg'] += 1
    if g > 75: B[int(t//1000)]['cg75'] += 1
for t, g, pid, _ in sg:
    if g > 75: B[int(t//1000)]['sg75'] += 1
for pid, s in servers.items():
    k = str(pid)[-2:]
    for t, w in s['marks']: B[int((t-T0)//1000)][w] += 1
    for t, ms in s['stalls']: B[int((t-T0)//1000)]['st'+k] += ms
    for t, ms, kind in s['gcs']: B[int((t-T0)//1000)]['gc'+k] += ms
    for t, ms in s['lateness']:
        if ms > 25: B[int((t-T0)//1000)]['late'+k] += 1
for t, ms in client['stalls']: B[int((t-T0)//1000)]['stC'] += ms
keys = ['active','cg','cg75','sg75','accept','shed'] + [p+str(pid)[-2:] for pid in servers for p in ('st','gc','late')] + ['stC']
print('sec ' + ' '.join(f'{k:>7}' for k in keys))
for sec in sorted(B):
    if sec < -2: continue
    print(f'{sec:3} ' + ' '.join(f'{round(B[sec][k]):>7}' for k in keys))
