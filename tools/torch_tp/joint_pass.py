"""torch 2.13's own schedule_overlap_bucketing on the JOINT graph of torchtitan PR #2961's step.

PR #2961 (graph_trainer, aot_fx_trace) runs the pass once over the traced forward+loss+backward graph
of Llama3-8B on FSDP 4 x TP 2 with nothing recomputed. This script traces that graph the way
tools/torch_tp/trace_tp.py does (torchtitan's TP plan with sequence and loss parallel, SimpleFSDP
2-D DTensor parameters; meta tensors, fake process group), hands the joint graph (functorch's
joint_custom_pass hook, before partitioning) to torch's pass and records what torch decided and
what it reports: per collective its estimate and exposed time, the buckets, the summary line.

It is ../shared/reference/torch_pass/gen_2d.py (the 2-D fixture generator, patches 1-4 and the
recording hooks unchanged) with: --dims 8b, the pass run on the joint graph (--joint, the default),
FSDP all-gathers saved for the backward (reshard off: memory policy none), profile A0 = torch
2.13's defaults with pre_bucketing_fsdp_collectives off (the April 2026 nightly predates
pytorch #180830), and compute estimated at the h100-96gb preset's achieved rates (--gpu), so the
hiding capacity torch plans with is the one fsdp-sim times with. Collectives: torch's own
analytical NCCL model (a fake process group has no NCCL time estimator; on a real NCCL group torch
asks NCCL's simulator first: comm_analysis.estimate_nccl_collective_runtime_from_fx_node).

Usage: joint_pass.py --dp 4 --tp 2 --layers 2 --dims 8b --group A0 --sac none --out DIR
"""
import argparse, collections, functools, inspect, io, json, logging, operator, os, re, sys, time, traceback

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--dp", type=int, required=True)
ap.add_argument("--tp", type=int, required=True)
ap.add_argument("--layers", type=int, default=1)
ap.add_argument("--group", default="A0", choices=["C", "CA", "A0"])
ap.add_argument("--sac", default="none", choices=["op", "none"])
ap.add_argument("--dims", default="8b", choices=["dev_small", "dev_mid", "8b"])
ap.add_argument("--gpu", default="h100-96gb", choices=["h200", "h100-96gb"])
ap.add_argument("--split", action="store_true", help="run the pass on the partitioned fw/bw graphs instead")
ap.add_argument("--knobs", default="{}")
ap.add_argument("--tag", default="")
ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
ARGS = ap.parse_args()
DP, TP = ARGS.dp, ARGS.tp
WORLD = DP * TP
DEV = "meta"
MEM_ZERO = False
GROUP_ID = ARGS.group
KNOB_OVERRIDES = json.loads(ARGS.knobs)
# not a pass argument: torch._inductor.config.test_configs.assume_bucketing_reduces_latency (default True)
ASSUME_BRL = KNOB_OVERRIDES.get("assume_bucketing_reduces_latency", True)
OUT = ARGS.out
for d in ("fx", "results", "logs"):
    os.makedirs(os.path.join(OUT, d), exist_ok=True)

LOG_BUF = io.StringIO()
_handler = logging.StreamHandler(LOG_BUF)
_handler.setLevel(logging.DEBUG)
_handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
for _name in ["torch._inductor.fx_passes.overlap_scheduling",
              "torch._inductor.fx_passes.overlap_preserving_bucketer",
              "torch._inductor.fx_passes.bucketing",
              "torch._inductor.fx_passes.fsdp"]:
    _lg = logging.getLogger(_name)
    _lg.setLevel(logging.DEBUG)
    _lg.addHandler(_handler)
    _lg.propagate = False

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
GROUP_SIZES = {DP_MESH.get_group().group_name: DP, TP_MESH.get_group().group_name: TP}
for g in (dist.group.WORLD,):
    GROUP_NAMES.setdefault(g.group_name, "world")
COLL_PREFIX = "_c10d_functional."


def is_collective(n):
    return n.op == "call_function" and str(n.target).startswith(COLL_PREFIX) and "wait_tensor" not in str(n.target)


import torch._inductor.config as ic
import torch._inductor.comm_analysis as comm_analysis
import torch._inductor.fx_passes.overlap_scheduling as ovs
import torch._inductor.fx_passes.overlap_preserving_bucketer as opb
import torch._inductor.fx_passes.bucketing as bkt
import torch.utils._runtime_estimation as rte
from torch._inductor.fx_passes.fusion_regions import is_view_node
from torch.utils.flop_counter import flop_registry

# the model, TP, op SAC and SimpleFSDP: titan_model.py (shared with the other tracer)
from titan_model import *  # noqa: F401,F403
from titan_model import _StridedShard, _is_fsdp_wait  # noqa: F401

JOINT_STATS = {}
CUR = {"reshard": True}


def annotate_fsdp_all_gather(gm, *args):
    tag_fsdp_all_gathers(gm, CUR["reshard"], JOINT_STATS, is_collective, COLL_PREFIX)
    gm.recompile()
    if not ARGS.split:
        make_compiler(CUR["tag"], "joint", CUR["meta"])(gm, None)
        raise JointDone()
    return gm


class JointDone(Exception):
    """The joint graph has been passed and recorded; the partitioner need not run."""


# ===== end of the trace_tp.py copy =====

# ===== copied unchanged from run_pass_v2.py (same folder): patches 1-4 and estimate_ms =====
PATCHES = []

# Patch 1: the NCCL analytical estimator picks bandwidth/latency tables by GPU generation.
# Without CUDA, get_gpu_type() falls back to nvidia-smi string matching and returns AMPERE.
# Pin it to HOPPER (what an H200 reports: compute capability 9.x).
comm_analysis.get_gpu_type = lambda: comm_analysis.NVIDIA_GPU_TYPE.HOPPER
PATCHES.append("torch._inductor.comm_analysis.get_gpu_type -> NVIDIA_GPU_TYPE.HOPPER "
               "(CPU fallback would return AMPERE); torch.cuda unavailable => gpus_per_node=8, "
               "_has_nvlink()=True, unchanged")

# Patch 2: torch's roofline (estimate_roofline_runtime_ms) is still evaluated for every compute
# node even when custom_runtime_estimation overrides it (its value is only logged / discarded).
# On CPU get_gpu_dram_gbps() needs triton and raises; give it H200 numbers so it does not crash.
rte.get_gpu_dram_gbps = lambda: 4800.0
rte.get_device_tflops = lambda dtype: 989.0
PATCHES.append("torch.utils._runtime_estimation.get_gpu_dram_gbps -> 4800, get_device_tflops -> 989 "
               "(only feeds torch's discarded/logged roofline value; without it the pass raises "
               "ModuleNotFoundError: triton)")

# Patch 3 (guard): no GPU benchmark may run. With compute_estimator='analytical' and
# collective_estimator='analytical' torch never calls these; if it did, fail loudly.
BENCH_CALLS = []


def _no_bench(name):
    def f(*a, **k):
        BENCH_CALLS.append(name)
        raise RuntimeError(f"GPU benchmark {name} called on CPU run")
    return f


ovs.benchmark_node_with_cache_key = _no_bench("benchmark_node_with_cache_key")
ovs.get_collective_do_bench = _no_bench("get_collective_do_bench")
import torch._inductor.fx_passes.node_runtime_estimation as nre
nre.benchmark_collective_with_cuda_events = _no_bench("benchmark_collective_with_cuda_events")
PATCHES.append("guard: overlap_scheduling.benchmark_node_with_cache_key, get_collective_do_bench, "
               "node_runtime_estimation.benchmark_collective_with_cuda_events raise if called "
               "(never called: compute_estimator/collective_estimator='analytical')")

# Patch 4 (tracing only): keep aten._fused_rms_norm as one node, as in the CUDA trace. In the
# CPU build it also has a CompositeImplicitAutograd kernel, which make_fx would inline.
torch.ops.aten._fused_rms_norm.default.decompose = lambda *a, **k: NotImplemented
PATCHES.append("tracing: aten._fused_rms_norm.default.decompose -> NotImplemented (keeps the "
               "forward RMSNorm one node, as on CUDA; backward is _fused_rms_norm_backward either way)")

# ------------------------------------------------------------- runtime estimate --------
PEAK_FLOPS = 989e12      # H200 dense bf16, FLOP/s
HBM_BPS = 4.8e12         # H200 HBM3e, B/s
ATTN_FLOPS = {"fwd": PEAK_FLOPS, "bwd": PEAK_FLOPS}
if ARGS.gpu == "h100-96gb":
    # fsdp-sim's h100-96gb preset (src/estimate/hardware.ts): achieved GEMM 709 TFLOPS (80 % of 886),
    # flash attention 310 fwd / 266 bwd, memory-bound kernels at 80 % of 2.4 TB/s
    PEAK_FLOPS, HBM_BPS = 709e12, 1.92e12
    ATTN_FLOPS = {"fwd": 310e12, "bwd": 266e12}
LAUNCH_S = 4e-6          # per compute kernel launch

_VIEW_PACKETS = set(rte._VIEW_OPS)


def _val(x):
    return x.meta.get("val") if isinstance(x, torch.fx.Node) else x


def node_io_bytes(node):
    """Input + output bytes, counted as torch's roofline does (torch.utils._runtime_estimation:
    get_num_bytes over the flattened args/kwargs and outputs; stride-0 dims count once)."""
    from torch.utils._pytree import tree_flatten, tree_map
    args = tree_map(_val, node.args)
    kwargs = tree_map(_val, node.kwargs)
    flat_in, _ = tree_flatten((args, kwargs))
    flat_out, _ = tree_flatten(_val(node))
    rd = sum(rte.get_num_bytes(t) for t in flat_in if isinstance(t, torch.Tensor))
    wr = sum(rte.get_num_bytes(t) for t in flat_out if isinstance(t, torch.Tensor))
    return int(rd + wr)


def node_flops(node):
    """FLOPs from torch's own flop_counter registry (same call as get_compute_time)."""
    from torch.utils._pytree import tree_map
    key = ovs._get_flop_registry_key(node.target)
    if key is None:
        return None
    args = tree_map(_val, node.args)
    kwargs = tree_map(_val, node.kwargs)
    return int(flop_registry[key](*args, **kwargs, out_val=_val(node)))


def is_collective_start(node):
    t = str(node.target)
    return node.op == "call_function" and t.startswith("_c10d_functional.") and "wait_tensor" not in t


def is_view_like(node):
    if node.target is operator.getitem:
        return True
    if is_view_node(node):
        return True
    return getattr(node.target, "overloadpacket", None) in _VIEW_PACKETS


def classify(node):
    if is_collective_start(node):
        return "collective"
    if node.op == "call_function" and "wait_tensor" in str(node.target):
        return "wait"
    if ovs.is_compute_node(node):
        return "compute"
    if is_view_like(node):
        return "view"
    return "memory"


def estimate_ms(node, override_size=None):
    """The one runtime function torch sees (custom_runtime_estimation). Milliseconds.
    compute (torch.is_compute_node: mm/addmm/bmm/attention fwd+bwd):
        (max(flops / 989e12, io_bytes / 4.8e12) + 4e-6) * 1e3
    collective start: torch's own estimate_nccl_collective_runtime_from_fx_node(node, override_size)
        (fake PG => no NCCL time estimator => the analytical NCCL model, GPU type pinned to HOPPER)
    wait_tensor, views, getitem: 0
    other call_function: io_bytes / 4.8e12 * 1e3   (0 with --mem-zero)
    """
    kind = classify(node)
    if kind == "collective":
        return float(comm_analysis.estimate_nccl_collective_runtime_from_fx_node(node, override_size))
    if kind in ("wait", "view"):
        return 0.0
    b = node_io_bytes(node)
    if kind == "compute":
        fl = node_flops(node) or 0
        t = str(node.target)
        peak = PEAK_FLOPS if "attention" not in t else ATTN_FLOPS["bwd" if "backward" in t else "fwd"]
        return (max(fl / peak, b / HBM_BPS) + LAUNCH_S) * 1e3
    return 0.0 if MEM_ZERO else b / HBM_BPS * 1e3


CALLS = []          # every call torch made to the custom estimator in the current graph


def recorded_estimate(node, override_size=None):
    v = estimate_ms(node, override_size)
    CALLS.append((node.name, override_size, v))
    return v


# ===== end of the copy =====

# ------------------------------------------------------------------ pass config -----------
KW_211 = dict(   # run_pass_v2.py profile (2.11 behaviour)
    max_in_flight_gb=5, max_compute_pre_fetch=200, collective_bucketing=True,
    insert_overlap_deps=False, compute_overlap_multipler=1.0, max_coll_distance=200,
    custom_runtime_estimation=recorded_estimate, collective_estimator="analytical",
    compute_estimator="analytical", max_memory_increase_gb=1.0, max_memory_increase_ratio=0.05,
    log_final_collectives_estimations=False, bucket_exposed_first=True,
    enable_fusion_regions=False, bucket_only_internode_comms=False,
    prioritize_bucketing_during_scheduling=True, max_off_bucket_gb=None, bucket_mode="default",
    pge_profile_path=None, pre_bucketing_fsdp_collectives=False,
)
# torch 2.13's own defaults: only what is passed explicitly differs from the signature default.
# collective_bucketing=True is what torchtitan's aot_eager_autobucketing backend sets
# (dist_opts.collective_bucketing = True; the bare signature default is False).
KW_213 = dict(
    collective_bucketing=True,
    custom_runtime_estimation=recorded_estimate,
    compute_estimator="analytical",
    enable_fusion_regions=False,
)
SIG = inspect.signature(ovs.schedule_overlap_bucketing)
SIG_DEFAULTS = {k: p.default for k, p in SIG.parameters.items() if p.default is not inspect.Parameter.empty}
if GROUP_ID in ("B", "C"):
    PASS_KW = dict(KW_211)
elif GROUP_ID in ("A", "CA"):
    PASS_KW = dict(KW_213)
else:  # A0
    PASS_KW = dict(KW_213, pre_bucketing_fsdp_collectives=False)
PASS_KW.update({k: v for k, v in KNOB_OVERRIDES.items() if k != "assume_bucketing_reduces_latency"})
# every knob's effective value (explicit or signature default), for the record
EFFECTIVE_KW = {k: PASS_KW.get(k, SIG_DEFAULTS.get(k)) for k in SIG.parameters if k != "gm"}
ic.allow_buffer_reuse = False
ic.test_configs.assume_bucketing_reduces_latency = ASSUME_BRL   # torch default True, stated explicitly

INFO = {
    "torch": torch.__version__, "world": WORLD, "device": DEV, "group": GROUP_ID,
    "variant": "main",
    "sig": str(SIG),
    "pass_kwargs_explicit": {k: (v if not callable(v) else "estimate_ms (joint_pass.py)") for k, v in PASS_KW.items()},
    "pass_kwargs": {k: (v if not callable(v) else "estimate_ms (joint_pass.py)") for k, v in EFFECTIVE_KW.items()},
    "knob_overrides": KNOB_OVERRIDES,
    "assume_bucketing_reduces_latency": ic.test_configs.assume_bucketing_reduces_latency,
    "dist_opts_pre_bucketing": {k: getattr(ic.aten_distributed_optimizations, k, None) for k in (
        "pre_bucketing_fsdp_collectives", "pre_bucketing_fsdp_collectives_bucket_cap_mb",
        "pre_bucketing_fsdp_collectives_min_bucket_cap_mb", "pre_bucketing_fsdp_collectives_max_bucket_cap_mb",
        "pre_bucketing_fsdp_collectives_saturation_calibration_multiplier")},
    "patches": PATCHES,
}

# ------------------------------------------------------------------ capture hooks ---------
CAP = {}
ORIG = {}          # collective start name -> list of original (dump) collective names it carries
MERGES = []        # every process_collective_bucket call: phase, inputs, new start
PHASE = {"now": "pre"}
_orig_run = ovs.OverlapScheduler.run


def _run_hook(self):
    CAP["scheduler"] = self
    PHASE["now"] = "schedule"
    CAP["graph_after_prebucketing"] = [
        n.name for n in self.gm.graph.nodes if is_collective_start(n)]
    return _orig_run(self)


ovs.OverlapScheduler.run = _run_hook
_orig_finalize = opb.finalize_overlap_scheduling


def _finalize_hook(gm, collective_info, scheduled, **kw):
    sch = CAP.get("scheduler")
    CAP["schedule_order"] = [n.name for n in scheduled]
    CAP["collective_info"] = {
        s.name: {"wait": i.wait_node.name, "size_bytes": int(i.size_bytes),
                 "estimated_ms": float(i.estimated_time_ms), "exposed_ms": float(i.exposed_time_ms),
                 "hiding_nodes": [h.name for h in i.hiding_nodes]}
        for s, i in collective_info.items()}
    if sch is not None:
        CAP["node_estimations"] = {n.name: float(v) for n, v in sch.node_estimations.items()}
        CAP["compute_nodes"] = [n.name for n in sch.compute_nodes]
        CAP["allowed_peak_memory_bytes"] = int(sch.allowed_peak_memory_bytes)
    CAP["buckets_raw"] = []
    PHASE["now"] = "bucket"
    return _orig_finalize(gm, collective_info, scheduled, **kw)


opb.finalize_overlap_scheduling = _finalize_hook
_orig_apply = opb.OverlapPreservingBucketer._apply_bucket


def _apply_hook(self, bucket_info):
    CAP.setdefault("buckets_raw", []).append([n.name for n in bucket_info.collectives])
    return _orig_apply(self, bucket_info)


opb.OverlapPreservingBucketer._apply_bucket = _apply_hook
_orig_pcb = bkt.process_collective_bucket


def _pcb_hook(g, bucket_nodes, *a, **k):
    names = [n.name for n in bucket_nodes]
    new_nodes, repl = _orig_pcb(g, bucket_nodes, *a, **k)
    starts = [n for n in new_nodes if is_collective_start(n)]
    assert len(starts) == 1, [n.name for n in starts]
    s = starts[0]
    assert s.name not in ORIG, s.name
    ORIG[s.name] = [o for nm in names for o in ORIG.get(nm, [nm])]
    MERGES.append({"phase": PHASE["now"], "inputs": names, "new_start": s.name,
                   "new_target": str(s.target), "originals": ORIG[s.name]})
    return new_nodes, repl


bkt.process_collective_bucket = _pcb_hook

# ------------------------------------------------------------------ dump ------------------
def describe(node):
    v = node.meta.get("val")
    if isinstance(v, torch.Tensor):
        return {"shape": list(v.shape), "dtype": str(v.dtype).replace("torch.", "")}
    if isinstance(v, (list, tuple)):
        idx = [i for i, t in enumerate(v) if isinstance(t, torch.Tensor)]
        return {"multi": [list(v[i].shape) for i in idx],
                "multi_index": idx,
                "multi_dtype": [str(v[i].dtype).replace("torch.", "") for i in idx]}
    # v3: a non-tensor value (e.g. torch 2.13's FakeScriptObject placeholders for DeviceMesh in 2-D DTensor
    # graphs) is written the way the project's own writer does (tools/fx_dump/fsdp_sim_fx_dump.py
    # _result_fields: "a 0-d placeholder keeps the node importable"), with its type recorded.
    if node.op != "output":
        kind = type(v).__name__
        if kind in ("bool", "SymBool"):
            return {"shape": [], "dtype": "bool"}
        if kind in ("int", "SymInt"):
            return {"shape": [], "dtype": "int64"}
        if kind in ("float", "SymFloat"):
            return {"shape": [], "dtype": "float32"}
        return {"shape": [], "dtype": "float32", "value_type": kind}
    return {}


def dump_nodes(gm, with_est):
    rows = []
    for i, n in enumerate(gm.graph.nodes):
        row = {"i": i, "name": n.name, "op": n.op, "target": str(n.target),
               "args": [a.name for a in n.all_input_nodes]}
        row.update(describe(n))
        if with_est and n.op == "call_function":
            kind = classify(n)
            row["kind"] = kind
            row["est_ms"] = estimate_ms(n)
            if kind == "collective":
                row["est_ms_size0"] = estimate_ms(n, 0)
                row["size_bytes"] = int(comm_analysis.estimate_fx_collective_memory_footprint(n))
            elif kind == "compute":
                row["flops"] = node_flops(n)
                row["io_bytes"] = node_io_bytes(n)
            elif kind == "memory":
                row["io_bytes"] = node_io_bytes(n)
        rows.append(row)
    return rows


SUMMARY_RE = re.compile(
    r"Overlap scheduling results: exposed=(\d+), bad_exposed=(\d+), potentially_hidden=(\d+), "
    r"original_peak_memory=(\d+) bytes, rescheduled_peak_memory=(\d+) bytes, "
    r"total_exposed_ms=([\d.]+), hideable_exposed_ms=([\d.]+), total_potential_exposed_ms=([\d.]+), "
    r"wasted_compute_ms=([\d.]+)")
OVERLAP_RE = re.compile(r"Overlapping collective (\S+) with node (\S+): coll_domination=(\d+), current_depth=(\d+)")
BUCKETED_RE = re.compile(r"bucketed (\S+) with (\S+) using timeline position (\d+)")


def parse_log(text):
    res = {}
    m = SUMMARY_RE.search(text)
    if m:
        g = m.groups()
        res["summary"] = {
            "exposed": int(g[0]), "bad_exposed": int(g[1]), "potentially_hidden": int(g[2]),
            "original_peak_memory": int(g[3]), "rescheduled_peak_memory": int(g[4]),
            "total_exposed_ms": float(g[5]), "hideable_exposed_ms": float(g[6]),
            "total_potential_exposed_ms": float(g[7]), "wasted_compute_ms": float(g[8])}
    ov = {}
    for c, n, dom, depth in OVERLAP_RE.findall(text):
        ov.setdefault(c, []).append(n)
    res["overlapping"] = ov
    bl = [{"candidate": a, "into": b, "position": int(p)} for a, b, p in BUCKETED_RE.findall(text)]
    res["bucketed_log"] = bl
    # buckets from the log lines: each bucket is keyed by its first collective
    groups = {}
    for e in bl:
        groups.setdefault(e["into"], [e["into"]]).append(e["candidate"])
    res["buckets_from_log"] = list(groups.values())
    return res


# ------------------------------------------------------------------ driver ----------------
FSDP_RE = re.compile(r"pre_bucket_fsdp_collectives: fsdp_groups=(.*?), group_size=(\S+), nNodes=(\d+), "
                     r"bucket_cap_mb=([\d.]+), all_gather (\d+)->(\d+), reduce_scatter (\d+)->(\d+), "
                     r"all_reduce (\d+)->(\d+)")



def _coll_group(n):
    from torch.fx.operator_schemas import normalize_function
    opt = normalize_function(n.target, args=n.args, kwargs=n.kwargs, normalize_to_only_use_kwargs=True)
    return opt[1]["group_name"]


def annotate_groups(gm, rows):
    """Collective rows get their process group: group_name, group_size, mesh_dim (dp_shard | tp)."""
    by_name = {n.name: n for n in gm.graph.nodes}
    for r in rows:
        if r.get("kind") == "collective":
            gname = _coll_group(by_name[r["name"]])
            r["group_name"] = str(gname)
            r["group_size"] = GROUP_SIZES.get(gname)
            r["mesh_dim"] = GROUP_NAMES.get(gname, str(gname))


def make_compiler(graph_name, kind, meta):
    def compiler(gm, example_inputs):
        LOG_BUF.seek(0)
        LOG_BUF.truncate()
        CALLS.clear()
        CAP.clear()
        BENCH_CALLS.clear()
        ORIG.clear()
        MERGES.clear()
        PHASE["now"] = "pre"
        before = dump_nodes(gm, with_est=True)
        annotate_groups(gm, before)
        res = {"name": graph_name, "graph": {"fw": "forward", "bw": "backward"}.get(kind, kind), **meta}
        res["phase_of"] = {n.name: ("backward" if n.meta.get("partitioner_tag") == "is_backward" else "forward")
                           for n in gm.graph.nodes if is_collective_start(n)}
        t0 = time.time()
        try:
            ovs.schedule_overlap_bucketing(gm, **PASS_KW)
            res["error"] = None
        except Exception:
            res["error"] = traceback.format_exc()[-4000:]
            print(res["error"], flush=True)
        res["pass_wall_s"] = round(time.time() - t0, 3)
        gm.recompile()
        after = dump_nodes(gm, with_est=False)
        text = LOG_BUF.getvalue()
        parsed = parse_log(text)

        coll_before = [r["name"] for r in before if r.get("kind") == "collective"]
        orig_set = set(coll_before)
        coll_after = [r["name"] for r in after if r["op"] == "call_function"
                      and r["target"].startswith("_c10d_functional.") and "wait_tensor" not in r["target"]]
        # final buckets, as original (dump) names, in the order the final graph holds them
        final_groups = [ORIG.get(n, [n]) for n in coll_after]
        flat = [o for g in final_groups for o in g]
        assert sorted(flat) == sorted(coll_before), ("collectives lost/duplicated", len(flat), len(coll_before))
        buckets = [g for g in final_groups if len(g) > 1]
        # bucketer view (names as torch's overlap bucketer saw them) mapped to originals
        pre = [m for m in MERGES if m["phase"] == "pre"]
        est_by_name = {r["name"]: r.get("est_ms") for r in before}
        size0 = {r["name"]: r.get("est_ms_size0") for r in before}
        mism = [(n, o, v) for n, o, v in CALLS if n in est_by_name and o is None and abs(est_by_name[n] - v) > 0]
        mism += [(n, o, v) for n, o, v in CALLS if n in est_by_name and o == 0 and abs((size0.get(n) or -1) - v) > 0]
        used = CAP.get("node_estimations", {})
        mism_used = [n for n, v in used.items() if n in est_by_name and abs(est_by_name[n] - v) > 0]
        new_node_est = {n: v for n, v in used.items() if n not in est_by_name}
        m = FSDP_RE.search(text)
        prebucket_summary = None
        if m:
            g = m.groups()
            prebucket_summary = {"fsdp_groups": g[0], "group_size": g[1], "nNodes": int(g[2]),
                                 "bucket_cap_mb": float(g[3]), "all_gather": [int(g[4]), int(g[5])],
                                 "reduce_scatter": [int(g[6]), int(g[7])], "all_reduce": [int(g[8]), int(g[9])]}
        res.update({
            "collectivesBefore": len(coll_before),
            "collectivesAfter": len(coll_after),
            "collectivesAfterPrebucketing": len(CAP.get("graph_after_prebucketing") or []) if CAP.get("graph_after_prebucketing") is not None else None,
            "buckets": buckets,
            "prebuckets": [m["originals"] for m in pre],
            "prebucket_summary": prebucket_summary,
            "merges": MERGES[:],
            "buckets_raw": CAP.get("buckets_raw", []),
            "buckets_from_log": parsed["buckets_from_log"],
            "bucketed_log": parsed["bucketed_log"],
            "overlapping": parsed["overlapping"],
            "summary": parsed.get("summary"),
            "collective_info": CAP.get("collective_info"),
            "schedule_order": CAP.get("schedule_order"),
            "compute_nodes": CAP.get("compute_nodes"),
            "allowed_peak_memory_bytes": CAP.get("allowed_peak_memory_bytes"),
            "estimator_calls": {"total": len(CALLS),
                                "override_sizes": sorted({str(o) for _, o, _ in CALLS}),
                                "size0_calls": [[n, v] for n, o, v in CALLS if o == 0],
                                "mismatch_vs_dump": mism[:20],
                                "used_estimates_mismatch_vs_dump": mism_used[:20],
                                "nodes_torch_estimated": len(used),
                                "estimates_of_nodes_not_in_dump": new_node_est},
            "benchmark_calls": list(BENCH_CALLS),
            "after_nodes": [{k: r[k] for k in ("name", "op", "target", "args")} for r in after],
        })
        if not parsed.get("summary"):
            res["warning"] = "no 'Overlap scheduling results' line in the log"
        fx = {"format": "fsdp-sim fx dump v1", "graph": res["graph"],
              "source": f"torch {torch.__version__} {graph_name} (meta tensors, fake PG world {WORLD}; "
                        f"2-D mesh dp_shard {DP} x tp {TP}; group {GROUP_ID}; est_ms = tools/torch_tp/joint_pass.py estimate_ms ({ARGS.gpu}), exactly what the pass used; "
                        f"graph as handed to schedule_overlap_bucketing, before any pre-bucketing)",
              "world_size": WORLD,
              "mesh": {"dp_shard": DP, "tp": TP, "mesh_dim_names": ["dp_shard", "tp"]},
              "group_names": GROUP_NAMES, "nodes": before}
        base = f"{graph_name}_{kind}"
        with open(os.path.join(OUT, "fx", base + ".json"), "w") as f:
            json.dump(fx, f, separators=(",", ":"))
        with open(os.path.join(OUT, "results", base + ".json"), "w") as f:
            json.dump({**INFO, **res}, f, separators=(",", ":"))
        with open(os.path.join(OUT, "logs", base + ".log"), "w") as f:
            f.write(text)
        s = res.get("summary") or {}
        print(f"{base}: nodes={len(before)} coll {res['collectivesBefore']}->{res['collectivesAfterPrebucketing']}->{res['collectivesAfter']} "
              f"prebuckets={len(res['prebuckets'])} buckets={len(buckets)} exposed_ms={s.get('total_exposed_ms')} "
              f"potential_ms={s.get('total_potential_exposed_ms')} pass_s={res['pass_wall_s']} "
              f"mism={len(mism)}/{len(mism_used)} new_est={len(new_node_est)} bench={len(BENCH_CALLS)} err={bool(res['error'])}", flush=True)
        return gm
    return compiler




class Args:
    def __init__(self, dim, n_layers, n_heads, n_kv_heads, ffn, vocab, seq, batch):
        self.__dict__.update(dim=dim, n_layers=n_layers, n_heads=n_heads, n_kv_heads=n_kv_heads,
                             ffn=ffn, vocab=vocab, seq=seq, batch=batch)


DIMS = {
    # example dims; heads / kv heads / ffn / vocab divisible by tp 2 and 4 and by dp 2 and 4
    "dev_small": dict(dim=768, n_heads=8, n_kv_heads=4, ffn=2048, vocab=8192, seq=512, batch=1),
    "dev_mid": dict(dim=1536, n_heads=12, n_kv_heads=4, ffn=4096, vocab=32000, seq=1024, batch=1),
    "8b": dict(dim=4096, n_heads=32, n_kv_heads=8, ffn=14336, vocab=128256, seq=8192, batch=1),
}


def trace(n_layers, sac, tag):
    """trace_tp.py::trace with the pass run in the fw/bw compilers."""
    torch._dynamo.reset()
    a = Args(n_layers=n_layers, **DIMS[ARGS.dims])
    torch.manual_seed(0)
    step, tokens, labels = training_step(a, sac, MESH, DP_MESH, TP_MESH)

    from torch._dynamo.backends.common import aot_autograd
    meta = {"cfg": vars(a), "sac": sac, "reshard_after_forward": CUR["reshard"], "world": WORLD,
            "mesh": {"dp_shard": DP, "tp": TP}, "recompute_ag": CUR["reshard"]}
    CUR["tag"], CUR["meta"] = tag, meta
    backend = aot_autograd(fw_compiler=make_compiler(tag, "fw", meta),
                           bw_compiler=make_compiler(tag, "bw", meta),
                           keep_inference_input_mutations=True)
    compiled = torch.compile(step, backend=backend, fullgraph=True, dynamic=False)
    t0 = time.time()
    with functorch_config.patch("joint_custom_pass", annotate_fsdp_all_gather), loss_parallel():
        try:
            loss = compiled(tokens, labels)
            loss.backward()
        except Exception as e:  # torch wraps the hook's exception in its own
            if "JointDone" not in repr(e) and not isinstance(e, JointDone):
                raise
    print(tag, "total wall_s", round(time.time() - t0, 1), "joint", JOINT_STATS.get("joint_collectives"), flush=True)


if __name__ == "__main__":
    tag = f"{GROUP_ID}_dp{DP}_tp{TP}_{ARGS.layers}layer_{ARGS.dims}_sac{ARGS.sac}" + (f"_{ARGS.tag}" if ARGS.tag else "")
    print(json.dumps({k: v for k, v in INFO.items() if k not in ("sig", "patches")}, indent=None), flush=True)
    CUR["reshard"] = ARGS.sac != "none"  # memory policy none: the FSDP all-gathers are saved
    try:
        trace(ARGS.layers, ARGS.sac, tag)
    except Exception:
        msg = traceback.format_exc()
        print("FAILED", tag, msg[-4000:], flush=True)
        with open(os.path.join(OUT, "results", f"{tag}.error.txt"), "w") as f:
            f.write(msg)
        sys.exit(1)
    print("done", flush=True)
