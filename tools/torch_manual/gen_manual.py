"""torch's own manual overlap scheduler on SimpleFSDP graphs torch traced: the fixtures of
test/unit/backends/torch_manual.test.ts (see README.md beside this file).

Modes:
  jit    torch._inductor.fx_passes.overlap_manual_scheduling.manual_overlap_bucketing, run on the
         forward and on the backward graph of aot_autograd (torchtitan graph_trainer's jit mode:
         transformer_block_bucketing_reordering_pass as fw_compiler and bw_compiler).
  joint  torchtitan's JointManualOverlapScheduler (joint_transformer_block_bucketing_reordering_pass)
         on the joint forward+backward graph (functorch's joint_custom_pass hook, before partitioning:
         the graph aot_fx_trace hands its passes). torchtitan is not importable here, so the subclass
         and FSDPParamOrderBucketer are copied below from pytorch/torchtitan
         torchtitan/experiments/graph_trainer/fsdp_passes.py at commit
         b5bcd76c66d0acb1a08b176d9639425bc55e0b2a (trimmed to what a 1-D FSDP graph reaches).

The model is a small Llama3 (torchtitan's module names and parameter registration order) written
functionally: every parameter is a dim-0 shard gathered with funcol.all_gather_tensor_autograd after
a bf16 cast (SimpleFSDP), whose backward is the reduce-scatter. Each module's code runs under
torch.fx.traceback.annotate({"module_fqn": fqn}), as torchtitan's annotate_module_fqns does, and both
schedulers read the module from that annotation (torchtitan's _stack_fn). Meta tensors, fake process
group, CPU only.

Usage: gen_manual.py --mode jit|joint --layers 2 --world 4 [--recompute] [--all-reduce] --out DIR
"""
import argparse, functools, gzip, json, os
from collections import defaultdict

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.fx as fx
import torch.fx.traceback as fxt
from torch.testing._internal.distributed.fake_pg import FakeStore

ap = argparse.ArgumentParser()
ap.add_argument("--mode", required=True, choices=["jit", "joint"])
ap.add_argument("--layers", type=int, default=2)
ap.add_argument("--world", type=int, default=4)
ap.add_argument("--recompute", action="store_true", help="jit: the backward re-gathers (reshard after forward)")
ap.add_argument("--all-reduce", action="store_true",
                help="two dependent sum all-reduces in the output module (as loss parallel's): torch's split")
ap.add_argument("--mesh", default="", help="DPxTP, e.g. 4x2: tools/torch_tp's torchtitan Llama with TP and "
                                           "SimpleFSDP 2-D parameters instead (jit only)")
ap.add_argument("--out", required=True)
ARGS = ap.parse_args()
MESH_DIMS = tuple(int(x) for x in ARGS.mesh.split("x")) if ARGS.mesh else None
if MESH_DIMS:
    ARGS.world = MESH_DIMS[0] * MESH_DIMS[1]

dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=ARGS.world)
GROUP = dist.group.WORLD
DEV = "meta"
GROUP_NAMES = {GROUP.group_name: "dp_shard"}

from torch._inductor.fx_passes import overlap_manual_scheduling as oms
from torch._inductor.fx_passes.overlap_scheduling import is_compute_node
from torch.utils._ordered_set import OrderedSet

DIM, HEADS, KV_HEADS, FFN, VOCAB, SEQ, BATCH = 64, 4, 2, 192, 256, 32, 2


def param_shapes(n_layers):
    """torchtitan Llama3 parameters in registration order (state_dict order)."""
    hd = DIM // HEADS
    shapes = {"tok_embeddings.weight": (VOCAB, DIM)}
    for l in range(n_layers):
        p = f"layers.{l}."
        shapes.update({
            p + "attention.wq.weight": (HEADS * hd, DIM),
            p + "attention.wk.weight": (KV_HEADS * hd, DIM),
            p + "attention.wv.weight": (KV_HEADS * hd, DIM),
            p + "attention.wo.weight": (DIM, HEADS * hd),
            p + "feed_forward.w1.weight": (FFN, DIM),
            p + "feed_forward.w2.weight": (DIM, FFN),
            p + "feed_forward.w3.weight": (FFN, DIM),
            p + "attention_norm.weight": (DIM,),
            p + "ffn_norm.weight": (DIM,),
        })
    shapes["norm.weight"] = (DIM,)
    shapes["output.weight"] = (VOCAB, DIM)
    return shapes


def make_params(n_layers):
    out = {}
    for k, s in param_shapes(n_layers).items():
        local = (s[0] // ARGS.world,) + tuple(s[1:])
        out[k] = torch.nn.Parameter(torch.empty(local, device=DEV, dtype=torch.float32))
    return out


def gather(p):
    return funcol.all_gather_tensor_autograd(p.to(torch.bfloat16), gather_dim=0, group=GROUP)


def linear(ps, fqn, x):
    with fxt.annotate({"module_fqn": fqn}):
        return x @ gather(ps[fqn + ".weight"]).t()


def rms(ps, fqn, x):
    with fxt.annotate({"module_fqn": fqn}):
        w = gather(ps[fqn + ".weight"])
        return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5).to(x.dtype) * w


def block(ps, l, h):
    p = f"layers.{l}."
    with fxt.annotate({"module_fqn": f"layers.{l}"}):
        x = rms(ps, p + "attention_norm", h)
        with fxt.annotate({"module_fqn": p + "attention"}):
            hd = DIM // HEADS
            q = linear(ps, p + "attention.wq", x).view(BATCH, SEQ, HEADS, hd).transpose(1, 2)
            k = linear(ps, p + "attention.wk", x).view(BATCH, SEQ, KV_HEADS, hd).transpose(1, 2)
            v = linear(ps, p + "attention.wv", x).view(BATCH, SEQ, KV_HEADS, hd).transpose(1, 2)
            rep = HEADS // KV_HEADS
            k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
            a = torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v
            h = h + linear(ps, p + "attention.wo", a.transpose(1, 2).reshape(BATCH, SEQ, DIM))
        x = rms(ps, p + "ffn_norm", h)
        with fxt.annotate({"module_fqn": p + "feed_forward"}):
            g = torch.nn.functional.silu(linear(ps, p + "feed_forward.w1", x))
            f = linear(ps, p + "feed_forward.w2", g * linear(ps, p + "feed_forward.w3", x))
        return h + f


def forward(ps, tokens, n_layers):
    with fxt.annotate({"module_fqn": "tok_embeddings"}):
        h = torch.nn.functional.embedding(tokens, gather(ps["tok_embeddings.weight"]))
    for l in range(n_layers):
        h = block(ps, l, h)
    h = rms(ps, "norm", h)
    logits = linear(ps, "output", h)
    if ARGS.all_reduce:
        with fxt.annotate({"module_fqn": "output"}):
            # two all-reduces of one key, the second reading the first (loss parallel's sum-exp
            # after its max): torch must put them in different buckets
            total = funcol.all_reduce(logits.detach().float().sum(), "sum", GROUP)
            scaled = funcol.all_reduce((logits.detach().float() * total).sum(), "sum", GROUP)
            logits = logits + (scaled * 0).to(logits.dtype)
    with fxt.annotate({"module_fqn": "loss"}):
        # cross_entropy as the two ops it lowers to: on the meta device aten::nll_loss has no autograd
        # kernel under dynamo, so F.cross_entropy would leave every gradient undefined
        logp = torch.log_softmax(logits.float().view(-1, VOCAB), -1)
        return torch.ops.aten.nll_loss_forward(logp, tokens.view(-1), None, 1, -100)[0]


def module_plan(n_layers):
    """torchtitan get_transformer_block_buckets / get_default_transformer_block_buckets (lm_head
    is named output here, the name the model uses)."""
    return ["tok_embeddings", *[f"layers.{l}" for l in range(n_layers)], ["norm", "output"]]


def stack_fn(node):
    fqn = node.meta.get("custom", {}).get("module_fqn")
    return [(fqn, torch.nn.Module)] if fqn else []


def mesh_module_fqn(name):
    """A dynamo module path as an fqn: "L['model'].layers['0'].attention" -> "layers.0.attention"."""
    import re
    name = re.sub(r"^L\['\w+'\]\.?", "", name)
    return re.sub(r"\['([^']+)'\]", r".\1", name).lstrip(".")


def mesh_stack_fn(node):
    """2-D runs: the innermost module of nn_module_stack that is not SimpleFSDP's parametrization (the
    step closes over the model, so dynamo names it L['model'], which torch's own cleaner keeps whole)."""
    from torch._inductor.fx_passes.graph_view import _get_module_stack
    names = [mesh_module_fqn(n) for n, _ in _get_module_stack(node) if "fget" not in n]
    names = [n for n in names if n]
    return [(names[-1], torch.nn.Module)] if names else []


def module_of(node):
    """The module the pass sees a node in."""
    stack = mesh_stack_fn(node) if MESH_DIMS else stack_fn(node)
    return stack[0][0] if stack else None


def group_of(node):
    """A collective's process group, by mesh dimension name."""
    for a in node.args:
        if isinstance(a, str) and a in GROUP_NAMES:
            return GROUP_NAMES[a]
    return None


def is_backward(node):
    return node.meta.get("autograd_backward", False)


def dtype_of(v):
    return str(v.dtype).replace("torch.", "")


def describe(node):
    v = node.meta.get("val")
    if isinstance(v, torch.Tensor):
        return {"shape": list(v.shape), "dtype": dtype_of(v)}
    if isinstance(v, (list, tuple)):
        idx = [i for i, t in enumerate(v) if isinstance(t, torch.Tensor)]
        return {"multi": [list(v[i].shape) for i in idx], "multi_index": idx,
                "multi_dtype": [dtype_of(v[i]) for i in idx]}
    if node.op != "output":
        return {"shape": [], "dtype": "float32", "value_type": type(v).__name__}
    return {}


def dump_nodes(gm, joint):
    rows = []
    for i, n in enumerate(gm.graph.nodes):
        row = {"i": i, "name": n.name, "op": n.op, "target": str(n.target),
               "args": [a.name for a in n.all_input_nodes], **describe(n)}
        fqn = module_of(n)
        if fqn:
            row["module"] = fqn
        if is_coll_start(n) and group_of(n):
            row["group"] = group_of(n)
        if n.op == "call_function" and is_compute_node(n):
            row["compute"] = True
        if joint and is_backward(n):
            row["backward"] = True
        rows.append(row)
    return rows


LOG = []
_ORIG_BUCKET_GROUP = oms.ManualOverlapPreservingBucketer._bucket_group


def _recording_bucket_group(self, coll_nodes):
    """torch's _bucket_group, recording each bucket as its members' names in packing order."""
    before = OrderedSet(self.graph.nodes)
    out = _ORIG_BUCKET_GROUP(self, coll_nodes)
    new = [n.name for n in self.graph.nodes if n not in before]
    LOG.append({"members": [n.name for n in coll_nodes], "new": new})
    return out


oms.ManualOverlapPreservingBucketer._bucket_group = _recording_bucket_group


def final_order(gm, before_names, log, types):
    """The final graph as tokens: original node names, and start:/wait:<first member> for buckets."""
    owner = {}
    for b in log:
        for name in b["new"]:
            owner[name] = b["members"][0]
    out = []
    for n in gm.graph.nodes:
        t = types.get(n, "")
        if t.startswith("bucketed_") and t.endswith("_wait"):
            tok = "wait:" + owner[n.name]
        elif t.startswith("bucketed_"):
            tok = "start:" + owner[n.name]
        elif n.name in before_names:
            tok = n.name
        else:
            continue
        if not out or out[-1] != tok:
            out.append(tok)
    return out


def is_coll_start(n):
    return n.op == "call_function" and str(n.target).startswith("_c10d_functional.") and "wait" not in str(n.target)


def run_and_record(gm, run_pass, joint):
    before = dump_nodes(gm, joint)
    names = {r["name"] for r in before}
    LOG.clear()
    log = LOG
    sched = run_pass(gm)
    types = sched.bucketer.bucketed_node_types
    colls_after = [n for n in gm.graph.nodes if is_coll_start(n)]
    return before, {
        "buckets": [b["members"] for b in log],
        "order": final_order(gm, names, log, types),
        "collectivesBefore": sum(1 for r in before if r["op"] == "call_function"
                                 and r["target"].startswith("_c10d_functional.") and "wait" not in r["target"]),
        "collectivesAfter": len(colls_after),
    }


def jit_pass(plan):
    def run_pass(gm):
        s = oms.ManualOverlapScheduler(gm, plan, False, module_stack_fn=mesh_stack_fn if MESH_DIMS else stack_fn)
        s.run()
        return s
    return run_pass


# ---- torchtitan graph_trainer/fsdp_passes.py @ b5bcd76c, copied (1-D FSDP: no EP, no metadata tags) ----
def get_fsdp_param_module_order(state_fqns):
    order = {}
    for fqn in state_fqns:
        if "." not in fqn:
            continue
        order.setdefault(fqn.rsplit(".", 1)[0], len(order))
    return order


class FSDPParamOrderBucketer(oms.ManualOverlapPreservingBucketer):
    def __init__(self, *args, fsdp_param_module_order=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fsdp_param_module_order = fsdp_param_module_order or {}

    def _param_order_key(self, node):
        module_fqn = node.meta.get("custom", {}).get("module_fqn")
        return (self.fsdp_param_module_order.get(module_fqn, len(self.node_idx)), self.node_idx[node])

    def _bucket_group(self, coll_nodes):
        if self.fsdp_param_module_order:
            coll_nodes = sorted(coll_nodes, key=self._param_order_key)
        return super()._bucket_group(coll_nodes)


class JointManualOverlapScheduler(oms.ManualOverlapScheduler):
    def __init__(self, gm, plans, insert_overlap_deps, *, is_backward_fn, module_stack_fn, order):
        super().__init__(gm, plans, insert_overlap_deps, module_stack_fn=module_stack_fn)
        self._is_backward_fn = is_backward_fn
        self.bucketer = FSDPParamOrderBucketer(
            graph=self.graph, collective_info=self.collective_info,
            scheduled=OrderedSet(self.graph.nodes), bucket_mode=self.bucketer.bucket_mode,
            fsdp_param_module_order=order)

    def _manual_bucket_collectives(self):
        self._obtain_nodes_in_subgraph()
        for nodes in self.nodes_in_subgraph:
            fwd = [n for n in nodes if not self._is_backward_fn(n)]
            bwd = [n for n in nodes if self._is_backward_fn(n)]
            if fwd:
                self.bucketer.manual_bucket_collectives(nodes=fwd)
            if bwd:
                pre_nodes = set(self.graph.nodes)
                self.bucketer.manual_bucket_collectives(nodes=bwd)
                # torchtitan's _annotate_new_bucket_nodes: the new backward bucket nodes are backward
                for node in self.graph.nodes:
                    if node not in pre_nodes and node.op == "call_function":
                        node.meta["autograd_backward"] = True
        self.graph.lint()
        self.nodes = list(self.graph.nodes)
        from collections import Counter
        self.in_degree = Counter(user for node in self.nodes for user in node.users)

    def _manual_reorder_graph(self):
        import heapq
        overlap_deps = defaultdict(OrderedSet)
        delayed, current = [], []
        self.node_idx = {n: i for i, n in enumerate(self.nodes)}
        self.on_path_ready = []
        self.scheduled = OrderedSet()
        for node in self.nodes:
            if self.in_degree[node] == 0:
                self._add_to_ready_queue(node)
        while self.on_path_ready:
            _, node = heapq.heappop(self.on_path_ready)
            t = self.bucketer.bucketed_node_types.get(node, "")
            if node in self.scheduled:
                continue
            if t == "bucketed_reduce_scatter":
                current.append(node)
            elif t == "bucketed_reduce_scatter_wait":
                if current:
                    for d in delayed:
                        for rs in current:
                            overlap_deps[d].add(rs)
                    delayed.clear()
                    current.clear()
                delayed.append(node)
            self._schedule(node)
        self.scheduled = OrderedSet(reversed(list(self.scheduled)))
        bwd_scope, fwd_scope = OrderedSet(), OrderedSet()
        for sub in self.nodes_in_subgraph:
            for n in sub:
                (bwd_scope if self._is_backward_fn(n) else fwd_scope).add(n)
        picked = {True: [], False: []}
        last = {True: None, False: None}
        for node in self.scheduled:
            t = self.bucketer.bucketed_node_types.get(node, "")
            b = bool(self._is_backward_fn(node))
            if t == "bucketed_all_gather":
                picked[b].append(node)
                continue
            if t == "bucketed_all_gather_wait":
                for ag in picked[b]:
                    overlap_deps[self.bucketer.node_to_wait_map[node]].add(ag)
                picked[b].clear()
            if is_compute_node(node) and node in (bwd_scope if b else fwd_scope):
                last[b] = node
        for b in (True, False):
            if last[b] is None or not picked[b]:
                continue
            if any(self.node_ancestors.is_ancestor(ag, last[b]) for ag in picked[b]):
                continue
            for ag in picked[b]:
                overlap_deps[last[b]].add(ag)
        oms._move_overlap_nodes(self.graph, overlap_deps, self.bucketer.bucketed_node_types)
        self.graph.lint()
# ---- end of the torchtitan copy ----


def joint_pass(plan, order):
    def run_pass(gm):
        s = JointManualOverlapScheduler(gm, plan, False, is_backward_fn=is_backward,
                                        module_stack_fn=stack_fn, order=order)
        s.run()
        return s
    return run_pass


def reshard_after_forward(gm):
    """SimpleFSDP's reshard_after_forward.py annotate_fsdp_all_gather (functorch's joint_custom_pass):
    each parameter all-gather, its wait and its bf16 cast MUST_RECOMPUTE, so the backward re-gathers."""
    from torch.utils.checkpoint import CheckpointPolicy
    for node in gm.graph.nodes:
        if node.target is not torch.ops._c10d_functional.wait_tensor.default:
            continue
        ag = node.args[0]
        if ag.target is not torch.ops._c10d_functional.all_gather_into_tensor.default:
            continue
        for n in (node, ag, ag.args[0]):
            n.meta["recompute"] = CheckpointPolicy.MUST_RECOMPUTE
            n.meta["ac_graph_id"] = 100000


def mesh_step(n_layers):
    """tools/torch_tp/titan_model.py's torchtitan Llama (TP with sequence and loss parallel, SimpleFSDP
    2-D parameters, no SAC) on a (dp_shard, tp) mesh: (step, inputs, parameter names)."""
    import sys
    from torch.distributed.device_mesh import init_device_mesh
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch_tp"))
    import titan_model
    mesh = init_device_mesh("cpu", MESH_DIMS, mesh_dim_names=("dp_shard", "tp"))
    GROUP_NAMES.clear()
    GROUP_NAMES.update({mesh["dp_shard"].get_group().group_name: "dp_shard",
                        mesh["tp"].get_group().group_name: "tp"})
    a = titan_model.Args(dim=128, n_layers=n_layers, n_heads=4, n_kv_heads=2, ffn=256, vocab=256, seq=64, batch=1)
    torch.manual_seed(0)
    names = [n for n, _ in titan_model.Llama(a).named_parameters()]
    step, tokens, labels = titan_model.training_step(a, "none", mesh, mesh["dp_shard"], mesh["tp"])
    return step, (tokens, labels), names


def write(base, dump, expected):
    with gzip.open(os.path.join(ARGS.out, base + ".json.gz"), "wt") as f:
        json.dump({"dump": dump, "expected": expected}, f, separators=(",", ":"))
    print(base, "nodes", len(dump["nodes"]), "buckets", len(expected["buckets"]),
          "colls", expected["collectivesBefore"], "->", expected["collectivesAfter"], flush=True)


def main():
    os.makedirs(ARGS.out, exist_ok=True)
    L = ARGS.layers
    plan = module_plan(L)
    if MESH_DIMS:
        step, inputs, state_fqns = mesh_step(L)
    else:
        ps = make_params(L)
        tokens = torch.empty((BATCH, SEQ), device=DEV, dtype=torch.int64)
        step, inputs, state_fqns = functools.partial(forward, n_layers=L), (ps, tokens), list(ps)
    tag = f"{ARGS.mode}_{L}layer_w{ARGS.world}" + ("_recompute" if ARGS.recompute else "") + \
        ("_allreduce" if ARGS.all_reduce else "") + (f"_dp{MESH_DIMS[0]}tp{MESH_DIMS[1]}" if MESH_DIMS else "")
    source = f"torch {torch.__version__} tools/torch_manual/gen_manual.py --mode {ARGS.mode} --layers {L} " \
             f"--world {ARGS.world}" + (" --recompute" if ARGS.recompute else "") + \
             (" --all-reduce" if ARGS.all_reduce else "") + (f" --mesh {ARGS.mesh}" if ARGS.mesh else "")
    from torch._dynamo.backends.common import aot_autograd
    from functorch.compile import make_boxed_func
    meta = {"plan": plan, "stateFqns": state_fqns, "torch": torch.__version__, "mode": ARGS.mode}

    def compiler(kind):
        def c(gm, example_inputs):
            if ARGS.mode == "jit":
                nodes, exp = run_and_record(gm, jit_pass(plan), joint=False)
                graph = "forward" if kind == "fw" else "backward"
                write(f"{tag}_{kind}", {"format": "fsdp-sim fx dump v1", "graph": graph, "source": source,
                                        "world_size": ARGS.world, "nodes": nodes}, {**meta, **exp})
                gm.recompile()
            return make_boxed_func(gm)
        return c

    def joint_hook(gm, *args):
        if ARGS.recompute:
            reshard_after_forward(gm)
        if ARGS.mode == "joint":
            import copy
            g2 = copy.deepcopy(gm)
            order = get_fsdp_param_module_order(state_fqns)
            nodes, exp = run_and_record(g2, joint_pass(plan, order), joint=True)
            write(f"{tag}_joint", {"format": "fsdp-sim fx dump v1", "graph": "joint", "source": source,
                                   "world_size": ARGS.world, "nodes": nodes},
                  {**meta, **exp, "paramModuleOrder": order})
        return gm

    from torch._functorch import config as functorch_config
    backend = aot_autograd(fw_compiler=compiler("fw"), bw_compiler=compiler("bw"), keep_inference_input_mutations=True)
    torch._dynamo.reset()
    import contextlib
    from torch.distributed.tensor.parallel import loss_parallel
    with functorch_config.patch("joint_custom_pass", joint_hook), \
            (loss_parallel() if MESH_DIMS else contextlib.nullcontext()):
        compiled = torch.compile(step, backend=backend, fullgraph=True, dynamic=False)
        compiled(*inputs).backward()


if __name__ == "__main__":
    main()
