"""Graphs that reach torch 2.15's nested-wait guard (overlap_scheduling.py, wait_starts_being_handled)
past the recursion guard_probe.py finds: a wait handled inside another's handling that still has
exposed time, so it prefetches and hides in-flight collectives itself.

Each graph has two pairs of all-gathers, b1 then b2 on group B and c1 then c2 on group C (the first
of a pair costly, the second often free, so it is hidden while the first is still exposed), and X
and Z on other groups reading b2's and c2's results; four groups of a fake world of 8 (sizes 8, 4,
2, 4). Prefetching X behind a node handles wait(b2), which first forces wait(b1), still exposed:
its handling prefetches others, and may reach through c2 the same way. Pass arguments and the
estimator are guard_probe.py's.

  python guard_branches.py run SEEDS OUT.json    SEEDS: LO-HI (LO..HI-1) or a comma list; torch
                                                 2.15 also records which gated branches ran, found
                                                 by their source lines
  python guard_branches.py condense R214.json R215.json OUT.json.gz
        the seeds where 2.15 took a gated branch that changed something (a candidate skipped since
        nested handling started it, an active wait not hidden by a nested one, a forced wait
        refused), with 2.15's answers and 2.14's (or that 2.14 recursed without end)
"""
import json, random, sys
import guard_probe as gp
import torch, torch.distributed as dist

G4 = gp.G + [dist.new_group([0, 2, 4, 6])]
GN4 = [g.group_name for g in G4]
GS4 = [8, 4, 2, 4]
C10 = gp.C10


def build(seed):
    rnd = random.Random(seed)
    gb, gc, gx, gz = rnd.sample(range(4), 4)
    if rnd.random() < 0.5:
        gx = rnd.choice([gc, gz])
    if rnd.random() < 0.3:
        gz = rnd.choice([gb, gx])
    nmm = rnd.randint(3, 6)
    use = {k: rnd.randrange(0, nmm) for k in ('b1', 'c1', 'x', 'z')}
    order = rnd.sample(['b', 'c'], 2)

    def f(x, wb1, wb2, wc1, wc2):
        s = {}
        for p in order:
            w1, w2, g = (wb1, wb2, gb) if p == 'b' else (wc1, wc2, gc)
            s[p + '1'] = C10.all_gather_into_tensor(w1, GS4[g], GN4[g])
            s[p + '2'] = C10.all_gather_into_tensor(w2, GS4[g], GN4[g])
        o = {k: C10.wait_tensor(v) for k, v in s.items()}
        o['x'] = C10.wait_tensor(C10.all_gather_into_tensor(o['b2'][:16] * 2, GS4[gx], GN4[gx]))
        o['z'] = C10.wait_tensor(C10.all_gather_into_tensor(o['c2'][:16] * 2, GS4[gz], GN4[gz]))
        h = x
        for m in range(nmm):
            for k, u in use.items():
                if u == m:
                    h = h + o[k][:16].sum()
            h = torch.mm(h, h)
        return (h,)

    with gp.FakeTensorMode():
        x = torch.randn(16, 16, device='meta')
        ws = [torch.randn(rnd.choice([16, 32, 64]), 16, device='meta') for _ in range(4)]
    gm = gp.make_fx(f, tracing_mode='fake')(x, *ws)
    est = {}
    ags = [p + i for p in order for i in '12'] + ['x', 'z']  # the all-gathers in trace order
    for n in gm.graph.nodes:
        if n.op != 'call_function':
            continue
        t = str(n.target)
        if 'all_gather' in t:
            k = ags.pop(0)
            e = rnd.choice([0.02, 0.1, 0.3, 0.6, 1.0, 2.0])
            if k in ('b2', 'c2'):
                e = rnd.choice([0.0, 0.0, 0.01, e])
            if k in ('b1', 'c1'):
                e = rnd.choice([0.3, 1.0, 2.0, 4.0, 8.0])
            est[n.name] = (e, rnd.choice([0.0, e, e * 2, 0.02]))
        elif 'mm' in t:
            est[n.name] = (rnd.choice([0.05, 0.1, 0.2, 0.4]), None)
        elif 'wait' in t or 'getitem' in t or gp.is_view_node(n) or n.target in gp._VIEWS:
            est[n.name] = (0.0, None)
        else:
            est[n.name] = (rnd.choice([0.0, 0.0, 0.01, 0.03]), None)
    return gm, est


# torch 2.15's gated statements, found by the line before them (the statement is the next line)
MARKERS = {
    'if start_node in self.wait_starts_being_handled:': 'active_not_hidden',
    'if collective not in self.unscheduled_collectives:': 'candidate_started',
    'if self._would_reenter_wait(oldest_start):': 'force_refused',
    'if self._would_reenter_wait(coll_start):': 'path_refused',
}


def gated_lines():
    src = open(gp.ovs.__file__).read().split('\n')
    lines = {}
    for i, text in enumerate(src):
        name = MARKERS.get(text.strip())
        if name is not None:
            lines[i + 2] = name  # 1-based number of the statement after the `if`
    return lines


def traced_run(seed, lines):
    """gp.run with a line tracer on overlap_scheduling.py; a hit on active_not_hidden counts only when
    the skipped collective still had exposed time and its group time left (else 2.14 did the same)."""
    hits = {}
    fn = gp.ovs.__file__

    def local(frame, event, arg):
        if event == 'line' and frame.f_lineno in lines:
            name = lines[frame.f_lineno]
            if name == 'active_not_hidden':
                loc = frame.f_locals
                pg = gp.ovs.get_group_name(loc['start_node'])
                if loc['info'].exposed_time_ms <= 0 or loc['remaining_time_per_pg'].get(pg, 0) <= 0:
                    name = None
            if name is not None:
                hits[name] = hits.get(name, 0) + 1
        return local

    sys.settrace(lambda frame, event, arg: local if frame.f_code.co_filename == fn else None)
    try:
        r = gp.run(seed)
    finally:
        sys.settrace(None)
    r['hits'] = hits
    return r


def condense(r214, r215, dest):
    import gzip
    a, b = json.load(open(r214)), json.load(open(r215))
    assert all('error' not in v for v in b.values()), 'torch 2.15 failed on a seed'
    gated = ('active_not_hidden', 'candidate_started', 'force_refused')
    keep = [k for k in b if any(h in b[k]['hits'] for h in gated)]
    print(f'{len(keep)} of {len(b)} seeds take a gated branch;',
          sum(a[k].get('error') == 'recursion' for k in keep), 'of them recurse in 2.14')
    cases = {}
    for k in keep:
        c = {'dump': b[k]['dump'], 'order': b[k]['order'], 'exposedMs': b[k]['exp'], 'branches': b[k]['hits']}
        if 'error' in a[k]:
            c['torch214'] = {'error': a[k]['error']}
        else:
            c['torch214'] = {'order': a[k]['order'], 'exposedMs': a[k]['exp']}
        cases[k] = c
    out = {'torch': b[keep[0]]['torch'], 'torch214': next(iter(a.values()))['torch'], 'cases': cases}
    with open(dest, 'wb') as raw, gzip.GzipFile(fileobj=raw, mode='wb', mtime=0) as z:
        z.write(json.dumps(out, separators=(',', ':')).encode())


if __name__ == '__main__':
    if sys.argv[1] == 'condense':
        condense(*sys.argv[2:5])
        sys.exit(0)
    gp.build = build
    spec = sys.argv[2]
    seeds = range(*map(int, spec.split('-'))) if '-' in spec else [int(x) for x in spec.split(',')]
    lines = gated_lines() if hasattr(gp.ovs.OverlapScheduler, '_would_reenter_wait') else {}
    out = {}
    for s in seeds:
        out[s] = traced_run(s, lines) if lines else gp.run(s)
        out[s]['torch'] = torch.__version__
    json.dump(out, open(sys.argv[3], 'w'))
    print(torch.__version__, 'done', sum(1 for v in out.values() if 'error' in v), 'errors')
