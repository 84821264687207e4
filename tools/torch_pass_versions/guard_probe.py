"""Random small graphs with all-gathers on three process groups (sizes 8, 4, 2 of a fake world of 8)
through torch's own schedule_overlap_bucketing, every node's runtime drawn per seed and recorded in
the dump: to compare torch versions around 2.15's nested-wait guard (overlap_scheduling.py,
wait_starts_being_handled), and the port with them.

  python guard_probe.py run LO HI OUT.json          torch (this interpreter's) on seeds LO..HI-1:
                                                      per seed the dump (fsdp-sim fx dump v1, before
                                                      the pass), torch's scheduled order and each
                                                      collective's exposed ms, or the error it raised
  python guard_probe.py condense R213.json R215.json OUT.json.gz   (any interpreter with torch)
                                                      the seeds where 2.13 recursed without end, and
                                                      as many where both finished, with 2.15's answers

Pass arguments: collective_bucketing=False, pre_bucketing_fsdp_collectives=False,
max_off_bucket_gb=None, compute_estimator='analytical', enable_fusion_regions=False, the rest torch's
defaults (max_in_flight_gb 5, memory caps 1 GB / 5 %); the estimator answers for every node (views,
waits 0; a collective's size-0 latency is drawn too, sometimes at or above its time, so a collective
started beside a same-key one can start hidden).
"""
import json, random, sys, logging
import torch, torch.distributed as dist
from torch.testing._internal.distributed.fake_pg import FakeStore
dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=8)
G = [dist.group.WORLD, dist.new_group([0, 1, 2, 3]), dist.new_group([0, 1])]
GN = [g.group_name for g in G]
GS = [8, 4, 2]
from torch.fx.experimental.proxy_tensor import make_fx
from torch._subclasses.fake_tensor import FakeTensorMode
import torch._inductor.fx_passes.overlap_scheduling as ovs
import torch._inductor.comm_analysis as ca
import torch.utils._runtime_estimation as rte
rte.get_device_tflops = lambda *a, **k: 989.0
if hasattr(rte, 'get_device_dram_gbps'): rte.get_device_dram_gbps = lambda *a, **k: 4800.0
if hasattr(rte, 'get_gpu_dram_gbps'): rte.get_gpu_dram_gbps = lambda *a, **k: 4800.0
ca.get_gpu_type = lambda: ca.NVIDIA_GPU_TYPE.HOPPER
C10 = torch.ops._c10d_functional
from torch._inductor.fx_passes.fusion_regions import is_view_node
_VIEWS = set(rte._VIEW_OPS)

def build(seed):
    rnd = random.Random(seed)
    ncoll = rnd.randint(4, 9)
    nmm = rnd.randint(3, 7)
    plan = []  # per collective: group, src (-1 placeholder or earlier coll index), consumer mm index or None
    for c in range(ncoll):
        src = rnd.choice([-1, -1] + list(range(c)))
        plan.append((rnd.randrange(3), src, rnd.choice(list(range(nmm)) + [None])))
    def f(x, *ws):
        outs = []
        for c, (g, src, _) in enumerate(plan):
            inp = ws[c] if src < 0 else outs[src][:16] * 2
            a = C10.all_gather_into_tensor(inp, GS[g], GN[g])
            outs.append(C10.wait_tensor(a))
        h = x
        for m in range(nmm):
            for c, (g, src, cons) in enumerate(plan):
                if cons == m:
                    h = h + outs[c][:16].sum()
            h = torch.mm(h, h)
        rest = [outs[c].sum() for c, (_, _, cons) in enumerate(plan) if cons is None]
        return (h, *rest)
    with FakeTensorMode():
        x = torch.randn(16, 16, device='meta')
        ws = [torch.randn(16, 16, device='meta') for _ in plan]
    gm = make_fx(f, tracing_mode='fake')(x, *ws)
    est = {}
    for n in gm.graph.nodes:
        if n.op != 'call_function':
            continue
        t = str(n.target)
        if 'all_gather' in t:
            e = rnd.choice([0.05, 0.1, 0.3, 0.6, 1.0])
            est[n.name] = (e, rnd.choice([0.0, e, e * 2, 0.02]))
        elif 'mm' in t:
            est[n.name] = (rnd.choice([0.05, 0.1, 0.2, 0.4]), None)
        elif 'wait' in t or 'getitem' in t:
            est[n.name] = (0.0, None)
        elif is_view_node(n) or n.target in _VIEWS:
            est[n.name] = (0.0, None)
        else:
            est[n.name] = (rnd.choice([0.0, 0.0, 0.01, 0.03]), None)
    return gm, est


def describe(node):
    v = node.meta.get("val")
    if isinstance(v, torch.Tensor):
        return {"shape": list(v.shape), "dtype": str(v.dtype).replace("torch.", "")}
    return {}


def dump(gm, est):
    rows = []
    for i, n in enumerate(gm.graph.nodes):
        # every node argument, repeats kept (mm(h, h) reads h twice)
        leaves = torch.utils._pytree.tree_leaves((n.args, n.kwargs))
        row = {"i": i, "name": n.name, "op": n.op, "target": str(n.target),
               "args": [a.name for a in leaves if isinstance(a, torch.fx.Node)]}
        row.update(describe(n))
        if n.op == "call_function":
            t = str(n.target)
            e = est[n.name]
            if 'all_gather' in t:
                row.update(kind="collective", est_ms=e[0], est_ms_size0=e[1], group_name=str(n.args[2]),
                           group_size=int(n.args[1]), size_bytes=int(ca.estimate_fx_collective_memory_footprint(n)))
            elif 'wait_tensor' in t:
                row.update(kind="wait", est_ms=0.0)
            elif ovs.is_compute_node(n):
                row.update(kind="compute", est_ms=e[0])
            elif e[0] == 0.0 and (is_view_node(n) or n.target in _VIEWS):
                row.update(kind="view", est_ms=0.0)
            else:
                row.update(kind="memory", est_ms=e[0])
        rows.append(row)
    return {"format": "fsdp-sim fx dump v1", "graph": "forward", "source": f"guard probe torch {torch.__version__}",
            "world_size": 8, "nodes": rows}

def run(seed):
    gm, est = build(seed)
    d = dump(gm, est)
    def estimate(node, override_size=None):
        e = est.get(node.name)
        if e is None:
            return 0.0
        if override_size == 0 and e[1] is not None:
            return e[1]
        return e[0]
    captured = {}
    orig_run = ovs.OverlapScheduler.run
    def hook(self):
        r = orig_run(self)
        captured['exp'] = {k.name: round(v.exposed_time_ms, 9) for k, v in self.collective_info.items()}
        captured['order'] = [n.name for n in self.scheduled]
        return r
    ovs.OverlapScheduler.run = hook
    try:
        ovs.schedule_overlap_bucketing(gm, custom_runtime_estimation=estimate, compute_estimator='analytical',
                                       collective_bucketing=False, pre_bucketing_fsdp_collectives=False,
                                       max_off_bucket_gb=None, enable_fusion_regions=False)
        captured['dump'] = d
        return captured
    except RecursionError:
        return {'error': 'recursion'}
    except Exception as e:
        return {'error': type(e).__name__ + ': ' + str(e)[:200]}
    finally:
        ovs.OverlapScheduler.run = orig_run

def condense(r213, r215, dest):
    import gzip
    a, b = json.load(open(r213)), json.load(open(r215))
    assert all('error' not in v for v in b.values()), 'torch 2.15 failed on a seed'
    rec = [k for k in a if a[k].get('error') == 'recursion']
    both = [k for k in a if 'error' not in a[k]]
    # where both finished they agree (the guard's other part needs a nested wait still exposed)
    same = [k for k in both if a[k]['order'] == b[k]['order'] and a[k]['exp'] == b[k]['exp']]
    print(f'{len(rec)} seeds recurse in 2.13; {len(same)} of {len(both)} others decide alike')
    keep = rec + both[:len(rec)]
    out = {'torch': b[keep[0]]['torch'], 'torch213': a[both[0]]['torch'],
           'cases': {k: {'dump': b[k]['dump'], 'order': b[k]['order'], 'exposedMs': b[k]['exp'],
                         'recursesIn213': k in rec} for k in keep}}
    with open(dest, 'wb') as raw, gzip.GzipFile(fileobj=raw, mode='wb', mtime=0) as z:
        z.write(json.dumps(out, separators=(',', ':')).encode())


if __name__ == '__main__':
    if sys.argv[1] == 'condense':
        condense(*sys.argv[2:5])
        sys.exit(0)
    lo, hi = int(sys.argv[2]), int(sys.argv[3])
    out = {}
    for s in range(lo, hi):
        out[s] = run(s)
        out[s]['torch'] = torch.__version__
    json.dump(out, open(sys.argv[4], 'w'))
    print(torch.__version__, 'done', sum(1 for v in out.values() if 'error' in v), 'errors')
