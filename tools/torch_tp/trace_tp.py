"""Trace a torchtitan-style Llama3 training step on an FSDP 4 x TP 2 mesh with real PyTorch and
count the collectives in the forward / backward graphs that aot_autograd produces.

Everything runs on CPU: fake process group (world 8), parameters and activations on the "meta"
device, so Llama3-8B dimensions cost no memory. The model is a minimal re-implementation of
torchtitan's Llama3 (torchtitan/models/llama3/model/model.py); the parallelisation follows
  * TP:  torchtitan/models/llama3/infra/parallelize.py::apply_tp (loss_parallel on), applied with
         torch's own parallelize_module / ColwiseParallel / RowwiseParallel / SequenceParallel /
         PrepareModuleInput;
  * SAC: torchtitan/distributed/activation_checkpoint.py::_apply_op_sac (selective_ac_option "op":
         _op_sac_save_list, every second mm recomputed), one checkpoint_wrapper per block;
  * DP:  torchtitan/experiments/simple_fsdp/simple_fsdp.py::data_parallel(mode="fully_shard")
         (2-D DTensor params (_StridedShard/Shard on dp_shard, TP placement on tp), a parametrization
         that re-wraps the local shard as a 1-D DTensor on dp_shard and redistributes it to
         Replicate with forward_dtype=bf16 / backward_dtype=fp32, Partial(avg) grads), and
         reshard_after_forward.py::annotate_fsdp_all_gather run as functorch's joint_custom_pass
         (the parameter all-gathers become MUST_RECOMPUTE), as simple_fsdp/backend.py does;
  * compile: torch.compile(step, fullgraph=True, backend=aot_autograd(fw_compiler, bw_compiler)),
         where step = model forward + F.cross_entropy under loss_parallel().

Usage:  python trace_tp.py [--layers 1,2,3] [--sac op|op_simplefsdp|none] [--out PATH]
"""
import argparse, collections, functools, json, operator, os, sys, time, traceback

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--layers", default="1,2,3")
ap.add_argument("--variants", default="op:true,none:false",
                help="comma list of SAC:RESHARD. SAC: op (torchtitan per-op SAC, default), "
                     "op_simplefsdp (the older simple_fsdp/activation_checkpoint.py policy: "
                     "all_gather/wait/_to_copy PREFER_SAVE), none. RESHARD: SimpleFSDP "
                     "fsdp_reshard_after_forward; true tags the parameter all-gathers "
                     "MUST_RECOMPUTE (backward re-gathers), false MUST_SAVE")
ap.add_argument("--dims", default="8b", choices=["8b", "tiny"])
ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                              "test", "fixtures", "torch_tp", "llama3_8b_fsdp4_tp2.json"))
ap.add_argument("--dump-graphs", default="", help="folder for readable fw/bw graph dumps (optional)")
ap.add_argument("--joint-out", default="",
                help="also write each variant's joint-graph collectives (before partitioning) here, gzipped JSON")
ARGS = ap.parse_args()

DP, TP = 4, 2
WORLD = DP * TP
DEV = "meta"

from torch.testing._internal.distributed.fake_pg import FakeStore
dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=WORLD)

from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Replicate, Shard, Partial
from torch.distributed.tensor._dtensor_spec import DTensorSpec, TensorMeta
from torch.distributed.tensor.placement_types import _StridedShard
from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel, SequenceParallel,
                                               PrepareModuleInput, parallelize_module, loss_parallel)
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts
import torch._functorch.config as functorch_config

MESH = init_device_mesh("cpu", (DP, TP), mesh_dim_names=("dp_shard", "tp"))
DP_MESH, TP_MESH = MESH["dp_shard"], MESH["tp"]
GROUP_NAMES = {DP_MESH.get_group().group_name: "dp_shard", TP_MESH.get_group().group_name: "tp"}
for g in (dist.group.WORLD,):
    GROUP_NAMES.setdefault(g.group_name, "world")

# Same tracing patch as ../../shared reference run_pass_v2.py: keep the forward RMSNorm one node.
torch.ops.aten._fused_rms_norm.default.decompose = lambda *a, **k: NotImplemented

# --------------------------------------------------------------------------- model ---------
# the model, TP, op SAC and SimpleFSDP: titan_model.py (shared with the other tracer)
from titan_model import *  # noqa: F401,F403
from titan_model import _StridedShard, _is_fsdp_wait  # noqa: F401

JOINT_STATS = {}
CUR = {"reshard": True, "norm_dim": None}


def annotate_fsdp_all_gather(gm, *args):
    tag_fsdp_all_gathers(gm, CUR["reshard"], JOINT_STATS, is_collective, COLL_PREFIX)
    JOINT_STATS["joint_list"] = joint_list(gm)
    gm.recompile()
    return gm


# ------------------------------------------------------------------ graph analysis ---------
COLL_PREFIX = "_c10d_functional."
COPY_OPS = {"aten.cat.default", "aten.clone.default", "aten._to_copy.default", "aten.copy_.default",
            "aten.copy.default", "aten.contiguous.default", "prims.convert_element_type.default",
            "aten.stack.default", "aten.split_with_sizes_copy.default", "aten.chunk_cat.default",
            "aten.index_select.default", "aten.constant_pad_nd.default", "aten._unsafe_view.default"}
# aten._unsafe_view is a view-like op in functionalized graphs but aot emits it after copies; keep it
VIEW_OPS = {"aten.view.default", "aten.reshape.default", "aten.permute.default", "aten.t.default",
            "aten.transpose.int", "aten.unsqueeze.default", "aten.squeeze.dim", "aten.squeeze.default",
            "aten.expand.default", "aten.slice.Tensor", "aten.select.int", "aten.split.Tensor",
            "aten.split_with_sizes.default", "aten.chunk.default", "aten.alias.default",
            "aten.unbind.int", "aten.as_strided.default", "aten.flatten.using_ints",
            "aten.view_as_real.default", "aten.view_as_complex.default", "<built-in function getitem>",
            "aten.detach.default", "aten.narrow.default"}


def is_collective(n):
    return n.op == "call_function" and str(n.target).startswith(COLL_PREFIX) and "wait_tensor" not in str(n.target)


def tval(n):
    return n.meta.get("val") if isinstance(n, torch.fx.Node) else None


def shape_of(n):
    v = tval(n)
    if isinstance(v, torch.Tensor):
        return list(v.shape), str(v.dtype).replace("torch.", ""), v.numel() * v.element_size()
    if isinstance(v, (list, tuple)):
        ts = [x for x in v if isinstance(x, torch.Tensor)]
        return ([list(x.shape) for x in ts], [str(x.dtype).replace("torch.", "") for x in ts],
                sum(x.numel() * x.element_size() for x in ts))
    return None, None, 0


def node_desc(n):
    s, d, b = shape_of(n)
    return {"name": n.name, "op": str(n.target), "shape": s, "dtype": d, "bytes": b,
            "is_copy": str(n.target) in COPY_OPS}


def walk_views(start, step, max_hops):
    """Nodes reached from `start` through views (`step`: a view's inputs or users), up to max_hops."""
    out, frontier, hops, seen = [], list(start), 0, set()
    while frontier and hops < max_hops:
        nxt = []
        for n in frontier:
            if not isinstance(n, torch.fx.Node) or n in seen:
                continue
            seen.add(n)
            if n.op == "call_function" and str(n.target) in VIEW_OPS:
                out.append({**node_desc(n), "view": True})
                nxt.extend(step(n))
            else:
                out.append(node_desc(n) if n.op == "call_function" else {"name": n.name, "op": n.op})
        frontier, hops = nxt, hops + 1
    return out


def neighbours_before(coll, max_hops=6):
    """Non-view producers of the collective's tensor input, walking back through views."""
    return walk_views([coll.args[0]], lambda n: n.all_input_nodes, max_hops)


def neighbours_after(coll, max_hops=6):
    """Users of the collective's wait_tensor, walking forward through views."""
    waits = [u for u in coll.users if "wait_tensor" in str(u.target)]
    return walk_views([u for w in waits for u in w.users], lambda n: n.users, max_hops)


def module_hint(n):
    s = n.meta.get("nn_module_stack") or n.meta.get("fwd_nn_module_stack") or {}
    if not s:
        return ""
    last = list(s.values())[-1]
    path = last[0] if isinstance(last, tuple) else str(last)
    path = path.replace("L['model'].", "").replace(".__dict__['_modules']['_checkpoint_wrapped_module']", "")
    if "fget.__closure__" in path:       # inside a SimpleFSDP parametrization property
        path = "<SimpleFSDP parametrization>"
    return path


GRAPHS = {}

NOTES = [
    "Model: minimal re-implementation of torchtitan Llama3 (RoPE with complex freqs_cis, GQA repeat_kv, "
    "nn.RMSNorm, SwiGLU FFN); parameters and activations on the meta device, fake process group, world 8.",
    "Attention calls aten._scaled_dot_product_cudnn_attention directly (what F.sdpa picks on H100/H200; "
    "on meta/CPU F.sdpa would pick the math kernel). No effect on collectives.",
    "Loss: F.cross_entropy spelled as torch.log_softmax + aten.nll_loss_forward (on meta aten.nll_loss is "
    "not decomposed and DTensor rejects it); these are the ops loss_parallel() intercepts on CUDA.",
    "aten._fused_rms_norm.default.decompose is disabled (as in run_pass_v2.py) so the forward RMSNorm is one node.",
    "SAC 'op' = torchtitan/distributed/activation_checkpoint.py::_apply_op_sac with op_sac_save_list and the "
    "every-second-mm rule (the variant the brief names). The newer FQN-based save list "
    "(layers.*.attention.mm_0/mm_2, feed_forward.mm_0/mm_2) saves the same mm outputs here.",
    "SimpleFSDP: the 2-D DTensor params are built directly (meta, no data) with simple_fsdp._distribute_dtensor's "
    "placements; replicate_compute and annotate_fsdp_all_gather are re-implemented from simple_fsdp.py and "
    "reshard_after_forward.py; the joint pass runs as functorch_config.joint_custom_pass, as backend.py does.",
    "'joint_graph_*' counts are taken in the joint forward+loss+backward graph before partitioning (no "
    "recomputation); fw/bw counts are after the min-cut partitioner.",
    "Classification: group by the group-name argument; in the backward graph a TP all-gather is "
    "'recomputed' when meta['partitioner_tag'] == 'is_forward'; a backward TP all_reduce of shape [dim] is "
    "a norm-weight gradient all-reduce.",
    "Layout copies: producers of a collective's input and consumers of its wait_tensor, walking through "
    "view ops; a copy is any of COPY_OPS in trace_tp.py. bytes = bytes of that op's output.",
]


def make_compiler(kind):
    def compiler(gm, example_inputs):
        GRAPHS[kind] = gm
        return gm
    return compiler


def classify(kind, n, norm_dim, ag_fw_input_names):
    tgt = str(n.target).replace(COLL_PREFIX, "").replace(".default", "")
    gname = n.args[2] if tgt in ("all_gather_into_tensor", "all_reduce") else None
    if tgt == "reduce_scatter_tensor":
        gname = n.args[3]
    if tgt == "all_gather_into_tensor":
        gname = n.args[2]
    if tgt == "all_reduce":
        gname = n.args[2]
    if tgt == "all_to_all_single":
        gname = n.args[3]
    group = GROUP_NAMES.get(gname, str(gname))
    out_shape, out_dtype, out_bytes = shape_of(n)
    in_shape, in_dtype, in_bytes = shape_of(n.args[0])
    # which graph input / ancestry feeds it
    anc_ph = n.args[0]
    while isinstance(anc_ph, torch.fx.Node) and anc_ph.op != "placeholder" and len(anc_ph.all_input_nodes) == 1:
        anc_ph = anc_ph.all_input_nodes[0]
    from_param = isinstance(anc_ph, torch.fx.Node) and anc_ph.op == "placeholder"
    if group == "dp_shard":
        what = {"all_gather_into_tensor": "param_gather" if kind == "fw" else "param_regather_bw",
                "reduce_scatter_tensor": "grad_reduce_scatter"}.get(tgt, "dp_other")
    elif group == "tp":
        if tgt == "all_gather_into_tensor":
            if kind == "fw":
                what = "sp_activation_gather"
            else:
                what = "sp_activation_gather_recomputed" if n.meta.get("_recomputed") else "sp_grad_gather"
        elif tgt == "reduce_scatter_tensor":
            what = "sp_activation_reduce_scatter" if kind == "fw" else "sp_grad_reduce_scatter"
        elif tgt == "all_reduce":
            if kind == "bw" and out_shape == [norm_dim]:
                what = "norm_weight_grad_all_reduce"
            else:
                what = "loss_parallel_all_reduce" if kind == "fw" else "tp_all_reduce_bw_other"
        else:
            what = "tp_other"
    else:
        what = "other"
    return {"name": n.name, "op": tgt, "group": group, "kind": what,
            "args": [a if not isinstance(a, torch.fx.Node) else a.name for a in n.args],
            "in_shape": in_shape, "in_dtype": in_dtype, "in_bytes": in_bytes,
            "out_shape": out_shape, "out_dtype": out_dtype, "out_bytes": out_bytes,
            "module": module_hint(n)}


def joint_list(gm):
    """The joint graph's collectives in order, each in the phase autograd traced it in (the backward's
    nodes carry meta['partitioner_tag'] == 'is_backward'); nothing is recomputed yet."""
    out = []
    for n in gm.graph.nodes:
        if is_collective(n):
            kind = "bw" if n.meta.get("partitioner_tag") == "is_backward" else "fw"
            c = classify(kind, n, CUR["norm_dim"], None)
            out.append({"phase": kind, **{k: c[k] for k in ("op", "group", "kind", "in_bytes", "out_bytes",
                                                           "out_dtype", "module")}})
    return out


def mark_recomputed(bw_gm):
    """In the backward graph, a recomputed forward op is a copy of a joint-graph forward node:
    the partitioner keeps its meta, so meta['partitioner_tag'] == 'is_forward' (true backward
    nodes carry 'is_backward')."""
    for n in bw_gm.graph.nodes:
        if n.meta.get("partitioner_tag") == "is_forward":
            n.meta["_recomputed"] = True


def analyse(gm, kind, a):
    if kind == "bw":
        mark_recomputed(gm)
    colls = []
    for i, n in enumerate(gm.graph.nodes):
        if is_collective(n):
            c = classify(kind, n, a.dim, None)
            c["index"] = i
            c["recompute_tag"] = str(n.meta.get("recompute")) if n.meta.get("recompute") is not None else None
            c["partitioner_tag"] = str(n.meta.get("partitioner_tag"))
            if c["group"] == "tp":
                for side, fn in (("before", neighbours_before), ("after", neighbours_after)):
                    nb = fn(n)
                    c[side] = [b for b in nb if not b.get("view")]
                    c[side + "_views_skipped"] = [b["op"] for b in nb if b.get("view")]
            colls.append(c)
    return colls


def layout_copies(colls):
    """Every data-copying op (COPY_OPS) directly before (producer, through views) or after
    (consumer of the wait, through views) a TP collective, aggregated."""
    agg = collections.Counter()
    for c in colls:
        if c["group"] != "tp":
            continue
        for side in ("before", "after"):
            for b in c.get(side, []):
                if b.get("is_copy"):
                    agg[f"{c['op']}|{c['kind']}|{side}|{b['op']}|{b['shape']}|{b['dtype']}|{b['bytes']}"] += 1
    return dict(sorted(agg.items()))


def summarise(colls):
    by = collections.Counter()
    for c in colls:
        by[f"{c['group']}|{c['op']}|{c['kind']}"] += 1
    return dict(sorted(by.items()))


def trace(n_layers, sac):
    torch._dynamo.reset()
    GRAPHS.clear()
    JOINT_STATS.clear()
    if ARGS.dims == "8b":
        a = Args(dim=4096, n_layers=n_layers, n_heads=32, n_kv_heads=8, ffn=14336, vocab=128256,
                 seq=8192, batch=1)
    else:
        a = Args(dim=256, n_layers=n_layers, n_heads=8, n_kv_heads=4, ffn=768, vocab=512, seq=256, batch=1)
    CUR["norm_dim"] = a.dim
    torch.manual_seed(0)
    step, tokens, labels = training_step(a, sac, MESH, DP_MESH, TP_MESH)

    from torch._dynamo.backends.common import aot_autograd
    backend = aot_autograd(fw_compiler=make_compiler("fw"), bw_compiler=make_compiler("bw"),
                           keep_inference_input_mutations=True)
    compiled = torch.compile(step, backend=backend, fullgraph=True, dynamic=False)
    t0 = time.time()
    with functorch_config.patch("joint_custom_pass", annotate_fsdp_all_gather), loss_parallel():
        loss = compiled(tokens, labels)
        loss.backward()
    wall = time.time() - t0
    res = {"n_layers": n_layers, "sac": sac, "trace_wall_s": round(wall, 1),
           "joint": {k: (dict(v) if isinstance(v, collections.Counter) else v) for k, v in JOINT_STATS.items()}}
    for kind in ("fw", "bw"):
        gm = GRAPHS.get(kind)
        if gm is None:
            res[kind] = {"error": "graph not captured"}
            continue
        if ARGS.dump_graphs:
            os.makedirs(ARGS.dump_graphs, exist_ok=True)
            with open(os.path.join(ARGS.dump_graphs, f"L{n_layers}_{sac}_rsf{int(CUR['reshard'])}_{kind}.txt"), "w") as f:
                f.write(gm.print_readable(print_output=False, include_stride=True, include_device=False))
        colls = analyse(gm, kind, a)
        waits = sum(1 for n in gm.graph.nodes if n.op == "call_function" and "wait_tensor" in str(n.target))
        res[kind] = {"nodes": len(gm.graph.nodes), "collectives": len(colls), "wait_tensors": waits,
                     "by_group_op_kind": summarise(colls), "tp_layout_copies": layout_copies(colls),
                     "list": colls}
    return res


def linear_fit(per_layers, key_fn):
    """collectives = a + b * n_layers, exact from the traced n_layers (least squares)."""
    xs = sorted(per_layers)
    keys = set()
    for x in xs:
        keys |= set(key_fn(per_layers[x]).keys())
    fit = {}
    for k in sorted(keys):
        ys = [key_fn(per_layers[x]).get(k, 0) for x in xs]
        if len(xs) == 1:
            fit[k] = {"a": ys[0], "b": 0, "at_32": ys[0]}
            continue
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        a0 = my - b * mx
        resid = max(abs(a0 + b * x - y) for x, y in zip(xs, ys))
        fit[k] = {"a": round(a0, 6), "b": round(b, 6), "max_residual": round(resid, 6),
                  "at_32": round(a0 + 32 * b, 3), "counts": dict(zip(map(str, xs), ys))}
    return fit


def run_variant(sac, reshard, layers):
    CUR["reshard"] = reshard
    out = {"sac": sac, "reshard_after_forward": reshard, "traces": {}}
    for L in layers:
        print(f"tracing n_layers={L} sac={sac} reshard_after_forward={reshard} ...", flush=True)
        try:
            r = trace(L, sac)
        except Exception:
            tb = traceback.format_exc()
            print(tb[-6000:], flush=True)
            out["traces"][str(L)] = {"error": tb[-6000:]}
            continue
        out["traces"][str(L)] = r
        print(json.dumps({"n_layers": L, "wall": r["trace_wall_s"], "joint": r["joint"],
                          "fw": r["fw"].get("by_group_op_kind"), "bw": r["bw"].get("by_group_op_kind")},
                         indent=1), flush=True)
    ok = {int(k): v for k, v in out["traces"].items() if "error" not in v}
    if not ok:
        return out

    def per_kind(r):
        return {f"{ph}|{k}": v for ph in ("fw", "bw") for k, v in r[ph]["by_group_op_kind"].items()}

    def per_group_op(r):
        d = collections.Counter()
        for ph in ("fw", "bw"):
            for c in r[ph]["list"]:
                d[f"{c['group']}|{c['op']}"] += 1
        return dict(d)

    def copies(r):
        return {f"{ph}|{k}": v for ph in ("fw", "bw") for k, v in r[ph]["tp_layout_copies"].items()}

    def totals(r):
        return {"fw": r["fw"]["collectives"], "bw": r["bw"]["collectives"],
                "total": r["fw"]["collectives"] + r["bw"]["collectives"],
                "total_incl_wait_tensor": sum(r[p]["collectives"] + r[p]["wait_tensors"] for p in ("fw", "bw")),
                "joint_graph_collectives": sum(r["joint"]["joint_collectives"].values()),
                "joint_graph_c10d_nodes_incl_wait": r["joint"]["joint_c10d_nodes_incl_wait"]}

    def joint_ops(r):
        return dict(r["joint"]["joint_collectives"])

    out["fit"] = {"totals": linear_fit(ok, totals),
                  "by_group_op": linear_fit(ok, per_group_op),
                  "by_phase_group_op_kind": linear_fit(ok, per_kind),
                  "joint_graph_by_op": linear_fit(ok, joint_ops),
                  "tp_layout_copies": linear_fit(ok, copies)}
    print(json.dumps({k: v.get("at_32") for k, v in out["fit"]["by_group_op"].items()}, indent=1))
    print(json.dumps({k: v.get("at_32") for k, v in out["fit"]["totals"].items()}, indent=1))
    return out


def main():
    layers = [int(x) for x in ARGS.layers.split(",") if x]
    out = {"generator": "tools/torch_tp/trace_tp.py", "torch": torch.__version__,
           "mesh": {"dp_shard": DP, "tp": TP, "world": WORLD, "mesh_dim_names": ["dp_shard", "tp"]},
           "device": DEV, "dims": ARGS.dims, "traced_n_layers": layers, "group_names": GROUP_NAMES,
           "notes": NOTES, "variants": {}}
    for v in ARGS.variants.split(","):
        sac, reshard = v.split(":")
        out["variants"][f"sac={sac},reshard_after_forward={reshard}"] = run_variant(sac, reshard == "true", layers)
    if ARGS.joint_out:
        write_joint(out, ARGS.joint_out)
        return
    os.makedirs(os.path.dirname(os.path.abspath(ARGS.out)), exist_ok=True)
    with open(ARGS.out, "w") as f:
        json.dump(out, f, indent=1, default=str)
    print("wrote", os.path.abspath(ARGS.out), flush=True)


def write_joint(out, path):
    """Only the joint graphs' collective lists (a small gzipped fixture); the full trace is not written."""
    import gzip
    joint = {k: out[k] for k in ("generator", "torch", "mesh", "dims", "traced_n_layers", "group_names")}
    joint["notes"] = [NOTES[-3], "Each collective's phase: meta['partitioner_tag'] of the joint graph node."]
    joint["variants"] = {
        name: {str(L): r["joint"]["joint_list"] for L, r in v["traces"].items() if "error" not in r}
        for name, v in out["variants"].items()}
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with gzip.open(path, "wt") as f:
        json.dump(joint, f, separators=(",", ":"))
    print("wrote", os.path.abspath(path), flush=True)


if __name__ == "__main__":
    main()
