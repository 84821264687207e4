# fsdp-sim FX graph exporter: a torch.compile backend (aot_autograd with an eager compiler) that
# writes each forward / backward aot graph it sees in the FX dump format v1
# (docs/ARCHITECTURE.md §8; read by src/graph/fx_import.ts), then runs the graph
# unchanged so training goes on. `dump_graph_module` does the walking on duck-typed objects
# (`.graph.nodes`, node `.op/.name/.target/.args/.kwargs/.meta['val']`), so it needs no torch.
# Collective estimates: torch._inductor.comm_analysis.estimate_nccl_collective_runtime_from_fx_node.
"""Dump torch.compile aot graphs for fsdp-sim.

    from fsdp_sim_fx_dump import fx_dump_backend
    model = torch.compile(model, backend=fx_dump_backend("out_dir"))

or, for a config that names its backend by string (torchtitan's ``compile.backend``):

    import fsdp_sim_fx_dump; fsdp_sim_fx_dump.register_fx_dump_backend("out_dir")
    # then backend="fsdp_sim_fx_dump"
"""

from __future__ import annotations

import itertools
import json
import math
import os
from typing import Any, Callable, Optional

FORMAT = "fsdp-sim fx dump v1"
GRAPH_KINDS = ("forward", "backward")
BACKEND_NAME = "fsdp_sim_fx_dump"
OUT_DIR_ENV = "FSDP_SIM_FX_DUMP_DIR"  # out dir of the registered backend when none is given

# Estimator signature: (fx_node) -> milliseconds, or None when it cannot say.
Estimator = Callable[[Any], Optional[float]]
_DEFAULT = object()


def _is_node(x: Any) -> bool:
    """An FX node, duck-typed: a string `name` and a string `op`."""
    return isinstance(getattr(x, "name", None), str) and isinstance(getattr(x, "op", None), str)


def _flat_nodes(x: Any, out: list) -> list:
    """Names of the nodes in an (args / kwargs) structure, depth first, in order, repeats kept."""
    if _is_node(x):
        out.append(x.name)
    elif isinstance(x, (list, tuple)):
        for y in x:
            _flat_nodes(y, out)
    elif isinstance(x, dict):
        for y in x.values():
            _flat_nodes(y, out)
    return out


def _dim(d: Any) -> int:
    """A dimension as an int; a SymInt gives its hint (no guard is added)."""
    if isinstance(d, int) and not isinstance(d, bool):
        return d
    hint = getattr(getattr(d, "node", None), "hint", None)
    if isinstance(hint, int):
        return hint
    try:
        return int(d)
    except Exception as e:  # noqa: BLE001 - an unbacked (data-dependent) size has no value
        raise ValueError(f"dimension {d!r} has no concrete value (unbacked SymInt?): {e}") from e


def _dtype_name(dtype: Any) -> str:
    """torch.bfloat16 → 'bfloat16' (str of a torch dtype is 'torch.bfloat16')."""
    s = str(dtype)
    return s[len("torch."):] if s.startswith("torch.") else s


def _is_tensor_like(v: Any) -> bool:
    return v is not None and hasattr(v, "shape") and hasattr(v, "dtype")


def _scalar_dtype(v: Any) -> Optional[str]:
    """dtype of a Python / symbolic scalar value (sym_size → int64), None if not a scalar."""
    kind = type(v).__name__
    if kind in ("bool", "SymBool"):
        return "bool"
    if kind in ("int", "SymInt"):
        return "int64"
    if kind in ("float", "SymFloat"):
        return "float32"
    return None


def _result_fields(node: Any) -> dict:
    """`shape`+`dtype` for one result, `multi` for a tuple of tensors, from meta['val']."""
    meta = getattr(node, "meta", None) or {}
    val = meta.get("val")
    if val is None:
        val = meta.get("tensor_meta")  # older graphs / no fake tensors: TensorMetadata(shape, dtype)
    if _is_tensor_like(val):
        return {"shape": [_dim(d) for d in val.shape], "dtype": _dtype_name(val.dtype)}
    if isinstance(val, (list, tuple)):
        # Tensors only: None (undefined outputs) and SymInts (attention's max_q) are left out,
        # as in the fixtures; the importer matches getitems to outputs by shape.
        tensors = [v for v in val if _is_tensor_like(v)]
        if tensors:
            return {"multi": [[_dim(d) for d in v.shape] for v in tensors],
                    "multi_dtype": [_dtype_name(v.dtype) for v in tensors]}
    scalar = _scalar_dtype(val)
    if scalar is not None:
        return {"shape": [], "dtype": scalar}
    # No value recorded (a None-returning op): a 0-d placeholder keeps the node importable.
    if val is None or isinstance(val, (list, tuple)):
        return {"shape": [], "dtype": "float32"}
    # An opaque object (torch 2.13 passes a DeviceMesh as a FakeScriptObject): no tensor, its type named.
    return {"shape": [], "dtype": "float32", "value_type": type(val).__name__}


def _op_name(target: str) -> str:
    """'_c10d_functional.wait_tensor.default' → 'wait_tensor'."""
    parts = target.split(".")
    return parts[1] if len(parts) >= 2 else target


def is_collective_target(target: str) -> bool:
    """A c10d functional collective that moves data (wait_tensor excluded)."""
    return "c10d_functional" in target and _op_name(target) != "wait_tensor"


# c10d functional collectives whose int argument is their group size (all_reduce and the rest carry none).
GROUP_SIZE_ARG_OPS = ("all_gather_into_tensor", "all_gather_into_tensor_out", "all_gather_into_tensor_coalesced",
                      "reduce_scatter_tensor", "reduce_scatter_tensor_coalesced")
# Group resolver signatures: (process-group name) -> its size / its ranks, or None when it cannot say.
GroupSizeOf = Callable[[str], Optional[int]]
GroupRanksOf = Callable[[str], Optional[tuple]]


def group_name_of(node: Any) -> Optional[str]:
    """The process-group name a c10d functional collective runs on: `group_name`, its last str argument."""
    kw = getattr(node, "kwargs", None) or {}
    if isinstance(kw.get("group_name"), str):
        return kw["group_name"]
    names = [a for a in getattr(node, "args", ()) if isinstance(a, str)]
    return names[-1] if names else None


def _arg_group_size(node: Any) -> Optional[int]:
    """The group-size argument of the collectives that have one (all_gather_into_tensor, reduce_scatter_tensor)."""
    if _op_name(str(node.target)) not in GROUP_SIZE_ARG_OPS:
        return None
    kw = getattr(node, "kwargs", None) or {}
    for a in [kw.get("group_size")] + list(node.args)[1:]:
        if isinstance(a, int) and not isinstance(a, bool) and a >= 1:
            return a
    return None


def _torch_group_size() -> Optional[GroupSizeOf]:
    """torch.distributed's size of a named process group, or None where torch.distributed is missing."""
    try:
        from torch.distributed.distributed_c10d import _resolve_process_group
    except Exception:  # noqa: BLE001 - no torch, or a build without distributed
        return None

    def size(name: str) -> Optional[int]:
        try:
            return int(_resolve_process_group(name).size())
        except Exception:  # noqa: BLE001 - a name this process never created
            return None

    return size


def _torch_group_ranks() -> Optional[GroupRanksOf]:
    """torch.distributed's global ranks of a named process group, or None where it is missing."""
    try:
        from torch.distributed.distributed_c10d import _resolve_process_group, get_process_group_ranks
    except Exception:  # noqa: BLE001 - no torch, or a build without distributed
        return None

    def ranks(name: str) -> Optional[tuple]:
        try:
            return tuple(get_process_group_ranks(_resolve_process_group(name)))
        except Exception:  # noqa: BLE001 - a name this process never created
            return None

    return ranks


def alias_groups(gm: Any, group_names: dict, ranks_of: Optional[GroupRanksOf]) -> dict:
    """`group_names` plus the collectives' groups that hold a mesh dim's ranks under another name
    (torchtitan's flattened `dp_shard_cp` when cp is 1, `dp` without replicas): they are that dim."""
    if not group_names or ranks_of is None:
        return group_names
    known = {ranks_of(name): dim for name, dim in group_names.items()}
    known.pop(None, None)
    out = dict(group_names)
    for n in gm.graph.nodes:
        name = group_name_of(n) if n.op == "call_function" and is_collective_target(str(n.target)) else None
        if name is not None and name not in out and known.get(ranks_of(name)) is not None:
            out[name] = known[ranks_of(name)]
    return out


def mesh_fields(mesh: Any) -> dict:
    """The dump's `mesh` and `group_names` for a DeviceMesh of two or more dims, {} for none or 1-D.

    Duck-typed: `mesh_dim_names`, `size(i)`, `get_group(name).group_name`. Dims of size 1 are
    left out (they split nothing: a cp of 1). A 1-D mesh is plain FSDP (its one group is the
    world), written as a 1-D dump always was.
    """
    if mesh is None:
        return {}
    all_names = list(getattr(mesh, "mesh_dim_names", None) or ())
    sizes = {name: int(mesh.size(i)) for i, name in enumerate(all_names) if int(mesh.size(i)) > 1}
    names = list(sizes)
    if len(names) < 2:
        return {}
    groups = {str(mesh.get_group(name).group_name): name for name in names}
    return {"mesh": {**sizes, "mesh_dim_names": names}, "group_names": groups}


def _mesh_size(head: dict) -> Optional[int]:
    """The number of ranks of a `mesh_fields` mesh (None without one)."""
    if not head:
        return None
    return math.prod(v for k, v in head["mesh"].items() if k != "mesh_dim_names")


def find_device_mesh(values: Any) -> Any:
    """The root DeviceMesh with the most dims among `values` (a backend's example inputs), else None.

    A DeviceMesh is passed as itself or held by a DTensor (`.device_mesh`); a sliced mesh gives its root.
    """
    best = None
    for v in values or ():
        m = v if hasattr(v, "mesh_dim_names") and hasattr(v, "get_group") else getattr(v, "device_mesh", None)
        if m is None or not hasattr(m, "mesh_dim_names"):
            continue
        root = m._get_root_mesh() if hasattr(m, "_get_root_mesh") else m
        if best is None or len(root.mesh_dim_names or ()) > len(best.mesh_dim_names or ()):
            best = root
    return best


def group_fields(node: Any, group_names: dict, group_size_of: Optional[GroupSizeOf]) -> dict:
    """A collective's process group as the importer reads it: `group_size`, and on a 2-D mesh
    `group_name` and `mesh_dim` (the mesh dimension whose group it is, where it is one)."""
    name = group_name_of(node)
    size = group_size_of(name) if group_size_of is not None and name is not None else None
    if size is None:
        size = _arg_group_size(node)
    out: dict = {}
    if size is not None:
        out["group_size"] = size
    if group_names and name is not None:
        out["group_name"] = name
        if name in group_names:
            out["mesh_dim"] = group_names[name]
    return out


def _torch_estimator() -> Optional[Estimator]:
    """torch's analytical NCCL estimate (ms), or None where torch / inductor is missing."""
    try:
        from torch._inductor.comm_analysis import estimate_nccl_collective_runtime_from_fx_node
    except Exception:  # noqa: BLE001 - no torch here, or an inductor without it
        return None

    def est(node: Any) -> Optional[float]:
        try:
            return float(estimate_nccl_collective_runtime_from_fx_node(node))
        except Exception:  # noqa: BLE001 - e.g. a process group it cannot resolve
            return None

    return est


def node_record(
    node: Any, i: int, estimate_ms: Optional[Estimator] = None, *, group_names: Optional[dict] = None,
    group_size_of: Optional[GroupSizeOf] = None,
) -> dict:
    """One node of the dump (format v1); collectives get their group (`group_fields`)."""
    op = node.op
    if op == "get_attr":
        op = "placeholder"  # a constant / buffer read: an input tensor to fsdp-sim
    elif op in ("call_method", "call_module"):
        op = "call_function"
    rec: dict = {
        "i": i,
        "name": node.name,
        "op": op,
        "target": str(node.target),
        "args": _flat_nodes(getattr(node, "args", ()), []) + _flat_nodes(getattr(node, "kwargs", {}) or {}, []),
    }
    if op == "output":
        return rec
    try:
        rec.update(_result_fields(node))
    except ValueError as e:
        raise ValueError(f"node {i} '{node.name}' ({rec['target']}): meta['val'] {e}") from e
    if op != "call_function" or not is_collective_target(rec["target"]):
        return rec
    rec.update(group_fields(node, group_names or {}, group_size_of))
    if estimate_ms is not None:
        ms = estimate_ms(node)
        if ms is not None and math.isfinite(ms) and ms >= 0:
            rec["est_ms"] = ms
    return rec


def infer_world_size(gm: Any) -> Optional[int]:
    """Group size of the graph's first collective (its first int argument after the input)."""
    for node in gm.graph.nodes:
        if node.op != "call_function" or not is_collective_target(str(node.target)):
            continue
        for a in list(node.args)[1:]:
            if isinstance(a, int) and not isinstance(a, bool) and a >= 1:
                return a
    return None


def dump_graph_module(
    gm: Any, graph_kind: str, world_size: int, path: str, *, source: str = "", estimate_ms: Any = _DEFAULT,
    mesh: Any = None, group_size_of: Any = _DEFAULT, group_ranks_of: Any = _DEFAULT,
) -> dict:
    """Writes `gm`'s graph to `path` in format v1 and returns the dump.

    estimate_ms: a function node → ms for collectives; by default torch's NCCL estimate when
    torch is importable (else no `est_ms`); None writes no estimates.
    mesh: the DeviceMesh of a 2-D run (FSDP × TP): the dump gets `mesh` and `group_names`, and
    each collective its `group_name` and `mesh_dim`. group_size_of: process-group name → size;
    by default torch.distributed's (else the collective's group-size argument, where it has one).
    group_ranks_of: name → ranks (torch.distributed's by default), so that a group holding a mesh
    dim's ranks under another name (a flattened mesh) is that dim.
    """
    if graph_kind not in GRAPH_KINDS:
        raise ValueError(f"graph_kind must be one of {list(GRAPH_KINDS)}, got {graph_kind!r}")
    if not isinstance(world_size, int) or isinstance(world_size, bool) or not 1 <= world_size <= 65536:
        raise ValueError(f"world_size must be an integer in [1, 65536], got {world_size!r}")
    head = mesh_fields(mesh)
    if head and _mesh_size(head) != world_size:
        raise ValueError(f"world_size {world_size} differs from the mesh's size {_mesh_size(head)} ({head['mesh']})")
    est = _torch_estimator() if estimate_ms is _DEFAULT else estimate_ms
    sizer = _torch_group_size() if group_size_of is _DEFAULT else group_size_of
    if head:
        ranks_of = _torch_group_ranks() if group_ranks_of is _DEFAULT else group_ranks_of
        head["group_names"] = alias_groups(gm, head["group_names"], ranks_of)
    groups = head.get("group_names", {})
    nodes = [node_record(n, i, est, group_names=groups, group_size_of=sizer) for i, n in enumerate(gm.graph.nodes)]
    dump = {"format": FORMAT, "graph": graph_kind, "source": source, "world_size": world_size, **head, "nodes": nodes}
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(_to_json(dump))
    os.replace(tmp, path)  # never leave a half-written dump
    return dump


def _to_json(dump: dict) -> str:
    """One node per line: valid JSON that still diffs well."""
    head = {k: v for k, v in dump.items() if k != "nodes"}
    lines = [json.dumps(n, allow_nan=False) for n in dump["nodes"]]
    body = json.dumps(head, allow_nan=False)[:-1]
    return body + ', "nodes": [\n' + ",\n".join(lines) + "\n]}\n"


def _dist_rank_and_size() -> tuple:
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
    except Exception:  # noqa: BLE001
        pass
    return 0, None


def fx_dump_backend(
    out_dir: str, *, world_size: Optional[int] = None, source: Optional[str] = None, all_ranks: bool = False,
    estimate: bool = True, mesh: Any = None, **aot_kwargs: Any,
) -> Callable:
    """A torch.compile backend: aot_autograd whose compilers dump each graph and run it eagerly.

    Files: `<out_dir>/graph_<k>_fw.json` and `graph_<k>_bw.json` for the k-th graph dynamo hands
    over (k > 0 after graph breaks); on ranks other than 0 nothing is written unless
    `all_ranks` (then `graph_<k>_rank<r>_fw.json`). mesh: the run's DeviceMesh; by default the
    one its inputs carry (DTensor parameters, or the mesh itself), so a 2-D run's collectives
    name their mesh dim. world_size: by default the mesh's size, else torch.distributed's, else
    the group size of the graph's first collective, else 1. aot_kwargs go to aot_autograd.
    """
    import torch
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd

    counter = itertools.count()

    def backend(gm: Any, example_inputs: Any) -> Any:
        k = next(counter)
        run_mesh = mesh if mesh is not None else find_device_mesh(example_inputs)
        mesh_size = _mesh_size(mesh_fields(run_mesh))

        def compiler(kind: str) -> Callable:
            def compile_fn(fx_gm: Any, _inputs: Any) -> Any:
                rank, dist_size = _dist_rank_and_size()
                if rank == 0 or all_ranks:
                    ws = world_size or mesh_size or dist_size or infer_world_size(fx_gm) or 1
                    tag = f"graph_{k}" + (f"_rank{rank}" if all_ranks else "")
                    path = os.path.join(out_dir, f"{tag}_{'fw' if kind == 'forward' else 'bw'}.json")
                    text = source or f"torch {torch.__version__} aot_autograd {kind} graph {k}, world size {ws}"
                    dump_graph_module(fx_gm, kind, ws, path, source=text, estimate_ms=_DEFAULT if estimate else None,
                                      mesh=run_mesh)
                return make_boxed_func(fx_gm.forward)  # run the graph as it is (aot_eager)

            return compile_fn

        return aot_autograd(fw_compiler=compiler("forward"), bw_compiler=compiler("backward"), **aot_kwargs)(gm, example_inputs)

    return backend


def dump_pass_input(
    scheduler: Any, path: str, *, latency_ms: Optional[Estimator] = None, source: str = "", mesh: Any = None,
) -> dict:
    """Writes the graph torch's overlap pass is about to schedule, with the pass's own estimates.

    `scheduler` is torch's OverlapScheduler after its estimates are aligned (duck-typed: `.gm`,
    `.node_estimations` {node: ms}, `.compute_nodes`, `.collective_info` {start: info with
    `.wait_node`, `.size_bytes`}). Every call_function node gets `est_ms` (0 where torch has
    none: such a node hides nothing either way) and `kind`; collectives also get `size_bytes`
    and `est_ms_size0` (the latency torch credits when it assumes bucketing, from `latency_ms`).
    fsdp-sim then decides with exactly the numbers torch used. mesh: as for `dump_graph_module`.
    """
    gm = scheduler.gm
    head = mesh_fields(mesh)
    if head:
        head["group_names"] = alias_groups(gm, head["group_names"], _torch_group_ranks())
    sizer = _torch_group_size()
    est = scheduler.node_estimations
    compute = set(scheduler.compute_nodes)
    infos = scheduler.collective_info
    waits = {info.wait_node for info in infos.values()}
    nodes = []
    for i, n in enumerate(gm.graph.nodes):
        rec = node_record(n, i, None, group_names=head.get("group_names", {}), group_size_of=sizer)
        if rec["op"] == "call_function":
            ms = est.get(n)
            rec["est_ms"] = float(ms) if ms is not None and math.isfinite(ms) and ms >= 0 else 0.0
            if n in infos:
                rec["kind"] = "collective"
                rec["size_bytes"] = int(infos[n].size_bytes)
                lat = latency_ms(n) if latency_ms is not None else None
                if lat is not None and math.isfinite(lat) and lat >= 0:
                    rec["est_ms_size0"] = float(lat)
            elif n in waits:
                rec["kind"] = "wait"
            elif n in compute:
                rec["kind"] = "compute"
            else:
                rec["kind"] = "memory" if rec["est_ms"] > 0 else "view"
        nodes.append(rec)
    names = {x.name for x in gm.graph.nodes if x.op == "placeholder"}
    kind = "backward" if any(nm.startswith("tangents") for nm in names) else "forward"
    ws = _mesh_size(head) or _dist_rank_and_size()[1] or infer_world_size(gm) or 1
    text = source or f"torch overlap pass input, {kind}"
    dump = {"format": FORMAT, "graph": kind, "source": text, "world_size": ws, **head, "nodes": nodes}
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(_to_json(dump))
    os.replace(tmp, path)
    return dump


def record_overlap_pass(out_dir: str, mesh: Any = None) -> None:
    """Makes torch's schedule_overlap_bucketing write each graph it passes, with its own estimates.

    Call before training starts (e.g. in a launcher) and run with the aot_eager_autobucketing
    backend as usual: every graph the pass schedules lands in `out_dir/pass_<k>_{fw,bw}.json`,
    and `fsdp-sim pass --fx-graph pass_0_fw.json pass_0_bw.json --torch-log LOG` then compares
    fsdp-sim's decisions with the ones your run made (set TORCH_LOGS or the overlap_scheduling /
    overlap_preserving_bucketer loggers to DEBUG to get LOG). mesh: a 2-D run's DeviceMesh, so
    each collective names its mesh dim (the pass sees plain tensors, not the mesh).
    """
    from torch._inductor.fx_passes import overlap_scheduling as ovs

    counter = itertools.count()
    align = ovs.OverlapScheduler._align_compute_nodes_runtime_estimations_across_all_distributed_ranks

    def aligned_then_dump(self: Any) -> Any:
        out = align(self)
        rank, _ = _dist_rank_and_size()
        if rank == 0:
            k = next(counter)
            latency = lambda n: ovs.estimate_collective_time(n, 0, custom_runtime_estimation=self.custom_runtime_estimation)  # noqa: E731
            probe = {x.name for x in self.gm.graph.nodes if x.op == "placeholder"}
            tag = "bw" if any(nm.startswith("tangents") for nm in probe) else "fw"
            dump_pass_input(self, os.path.join(out_dir, f"pass_{k // 2}_{tag}.json"), latency_ms=latency, mesh=mesh)
        return out

    ovs.OverlapScheduler._align_compute_nodes_runtime_estimations_across_all_distributed_ranks = aligned_then_dump


def register_fx_dump_backend(out_dir: Optional[str] = None, name: str = BACKEND_NAME, **kwargs: Any) -> str:
    """Registers the dump backend with dynamo under `name` (usable as backend="fsdp_sim_fx_dump")."""
    import torch._dynamo

    d = out_dir or os.environ.get(OUT_DIR_ENV) or "fx_dump"
    torch._dynamo.register_backend(fx_dump_backend(d, **kwargs), name=name)
    return name


