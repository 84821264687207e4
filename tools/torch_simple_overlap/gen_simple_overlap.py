"""torch's own inductor pass simple_overlap (torch/_inductor/comms.py, PRs #184225, #184235, #184240) on
small random graphs, recorded before and after: the fixtures of test/fixtures/torch_simple_overlap/.

The pass runs only inside inductor's Scheduler (scheduler.py, under
config.aten_distributed_optimizations.enable_simple_overlap), so each graph is compiled whole with
torch.compile(backend='inductor') on CPU, collectives on a fake process group of 8 ranks. A hook on
comms.simple_overlap records the scheduler nodes it is given (kind, output buffers, dependencies),
the memory facts its swaps are checked against (each buffer's size, producer, users, whether it is
a graph output; torch's own starting peak) and the order it returns, then stops the compile (no
C++ kernel is built). Graphs: a chain of matmuls and pointwise ops; all-gathers, reduce-scatters and
all-reduces on 1 to 3 process groups whose inputs are a graph input or an earlier result, each
waited at once and read some steps later; sizes drawn per seed.

  python gen_simple_overlap.py LO HI OUT.json.gz      seeds LO..HI-1, under this interpreter's torch
"""
import gzip, json, random, sys
import torch, torch.distributed as dist
from torch.testing._internal.distributed.fake_pg import FakeStore

dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=8)
GROUPS = [(dist.group.WORLD, 8), (dist.new_group([0, 1, 2, 3]), 4), (dist.new_group([0, 1]), 2)]
import torch._inductor.comms as comms
import torch._inductor.config as icfg
from torch._inductor.memory import get_freeable_input_buf
from torch._inductor.utils import contains_wait
from torch._inductor.virtualized import V

C10 = torch.ops._c10d_functional


class Stop(Exception):
    pass


def kind_of(s):
    if comms.contains_async_collective(s):
        return 'collective'
    return 'wait' if contains_wait(s) else 'other'


def record(snodes):
    """The pass's input as plain data."""
    inputs = get_freeable_input_buf(snodes, set(V.graph.graph_inputs.keys()))
    outputs = set(V.graph.get_output_names())
    nodes, bufs = [], []
    for s in snodes:
        nodes.append({'name': s.get_name(), 'kind': kind_of(s),
                      'outputs': sorted(o.get_name() for o in s.get_outputs()),
                      'deps': sorted(d.name for d in s.unmet_dependencies)})
        for o in s.get_outputs():
            m = o.mpi_buffer
            bufs.append({'name': o.get_name(), 'producer': s.get_name(), 'sizeAlloc': m.size_alloc,
                         'sizeFree': m.size_free, 'users': sorted(u.get_name() for u in m.succ_nodes),
                         'graphOutput': o.get_name() in outputs})
    for name, b in inputs.items():
        m = b.mpi_buffer
        bufs.append({'name': name, 'producer': None, 'sizeAlloc': m.size_free, 'sizeFree': m.size_free,
                     'users': sorted(u.get_name() for u in m.succ_nodes), 'graphOutput': name in outputs})
    peak = comms._initialize_memory_tracking(snodes)[0]
    return {'nodes': nodes, 'buffers': bufs, 'peakBytes': peak}


def make_fn(seed):
    rnd = random.Random(seed)
    ngroups = rnd.randint(1, 3)
    steps = rnd.randint(3, 7)
    colls = []  # (step it is issued after, kind, group, step whose result reads it)
    for _ in range(rnd.randint(1, 4)):
        at = rnd.randrange(0, steps - 1)
        colls.append((at, rnd.choice(['ag', 'rs', 'ar']), rnd.randrange(ngroups), rnd.randint(at + 1, steps)))

    def f(x, *ws):
        # each collective is waited at once, where the program issues it (as traced code reads), and
        # read some steps later: room for the pass to start it earlier and sink its wait
        h = x
        done = {}
        for step in range(steps):
            h = torch.mm(h, h) if rnd_ops[step] else torch.relu(h) * 2
            for c, (at, kind, g, use) in enumerate(colls):
                if at == step:
                    src = ws[c] if from_input[c] else h * (c + 1)
                    done[c] = C10.wait_tensor(issue(src, kind, g))
                if use == step + 1 and c in done:
                    h = h + done.pop(c)[:16, :16].sum()
        rest = [t.sum() for t in done.values()]
        return (h, *rest)

    def issue(t, kind, g):
        pg, n = GROUPS[g]
        if kind == 'ag':
            return C10.all_gather_into_tensor(t, n, pg.group_name)
        if kind == 'rs':
            return C10.reduce_scatter_tensor(t, 'sum', n, pg.group_name)
        return C10.all_reduce(t, 'sum', pg.group_name)

    rnd_ops = [rnd.random() < 0.6 for _ in range(steps)]
    from_input = [rnd.random() < 0.4 for _ in colls]
    dim = rnd.choice([16, 32, 64])
    args = [torch.randn(dim, dim)] + [torch.randn(dim * rnd.choice([1, 2]), dim) for _ in colls]
    return f, args


def run(seed):
    f, args = make_fn(seed)
    seen = {}
    orig = comms.simple_overlap

    def hook(snodes):
        seen['input'] = record(snodes)
        seen['order'] = [s.get_name() for s in orig(snodes)]
        raise Stop()

    comms.simple_overlap = hook
    torch._dynamo.reset()
    try:
        torch.compile(f, backend='inductor', fullgraph=True)(*args)
    except Exception as e:  # inductor wraps Stop
        if 'input' not in seen:
            return {'error': type(e).__name__ + ': ' + str(e)[:300]}
    finally:
        comms.simple_overlap = orig
    return {**seen['input'], 'order': seen['order']}


if __name__ == '__main__':
    assert icfg.aten_distributed_optimizations.enable_simple_overlap, 'this torch ships simple_overlap off'
    lo, hi, dest = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    cases = {}
    for s in range(lo, hi):
        r = run(s)
        if 'error' in r:
            print(s, r['error'])
            continue
        cases[str(s)] = r
    moved = sum(1 for c in cases.values() if c['order'] != [n['name'] for n in c['nodes']])
    print(f'torch {torch.__version__}: {len(cases)} graphs, the pass moved something in {moved}')
    out = {'torch': torch.__version__, 'cases': cases}
    with open(dest, 'wb') as raw, gzip.GzipFile(fileobj=raw, mode='wb', mtime=0) as z:
        z.write(json.dumps(out, separators=(',', ':')).encode())
