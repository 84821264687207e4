# Test driver for tools/fx_dump/fsdp_sim_fx_dump.py without torch: builds fake, duck-typed FX
# graph modules that look like torch's (OpOverload-like targets whose str is 'aten.mm.default',
# dtypes whose str is 'torch.bfloat16', FakeTensor-like meta['val'], non-node args such as group
# sizes and names mixed in as torch has them), calls dump_graph_module, prints a JSON summary.
# Usage: python3 fx_dump_driver.py MODE OUT_DIR   (MODE: simple | fixture | errors | backend | pass_input | mesh)
import json
import operator
import os
import sys

sys.modules["torch"] = None  # "without torch", even where it is installed: `import torch` raises ImportError
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools", "fx_dump"))
import fsdp_sim_fx_dump as fx  # noqa: E402


class FakeOp:
    """Stands for torch.ops.<ns>.<op>.<overload>: str gives 'aten.mm.default'."""

    def __init__(self, qualified):
        self.qualified = qualified

    def __str__(self):
        return self.qualified

    def __repr__(self):
        return f"<FakeOp {self.qualified}>"


class FakeDtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


class FakeSymInt:
    """A SymInt: int() would guard; the exporter must read the hint."""

    class _Node:
        def __init__(self, hint):
            self.hint = hint

    def __init__(self, hint):
        self.node = FakeSymInt._Node(hint)

    def __int__(self):
        raise AssertionError("int(SymInt) called: the exporter must use the hint")


class FakeTensor:
    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = dtype


class FakeNode:
    def __init__(self, name, op, target, args=(), kwargs=None, val=None):
        self.name, self.op, self.target = name, op, target
        self.args, self.kwargs = tuple(args), kwargs or {}
        self.meta = {} if val is None else {"val": val}


class FakeGraph:
    def __init__(self):
        self.nodes = []

    def add(self, *a, **k):
        n = FakeNode(*a, **k)
        self.nodes.append(n)
        return n


class FakeGraphModule:
    def __init__(self, graph):
        self.graph = graph


BF16, F32, I64 = FakeDtype("bfloat16"), FakeDtype("float32"), FakeDtype("int64")
AG = FakeOp("_c10d_functional.all_gather_into_tensor.default")
RS = FakeOp("_c10d_functional.reduce_scatter_tensor.default")
WAIT = FakeOp("_c10d_functional.wait_tensor.default")
aten = lambda op: FakeOp(f"aten.{op}")  # noqa: E731


def est_by_bytes(node):
    """Fake estimator: 1 ms per MB of output (the test recomputes it from the shape)."""
    v = node.meta["val"]
    numel = 1
    for d in v.shape:
        numel *= d
    return numel * {"bfloat16": 2, "float32": 4}[str(v.dtype)[6:]] / 1e6


def _simple_graphs():
    """A tiny SimpleFSDP step on 4 ranks: one linear weight, gathered in fw, reduce-scattered in bw."""
    fw = FakeGraph()
    w = fw.add("primals_1", "placeholder", "primals_1", val=FakeTensor([4, 16], F32))
    x = fw.add("primals_2", "placeholder", "primals_2", val=FakeTensor([8, 16], BF16))
    c = fw.add("_to_copy", "call_function", aten("_to_copy.default"), (w,), {"dtype": BF16}, FakeTensor([4, 16], BF16))
    ag = fw.add("all_gather_into_tensor", "call_function", AG, (c, 4, "0"), val=FakeTensor([16, 16], BF16))
    wt = fw.add("wait_tensor", "call_function", WAIT, (ag,), val=FakeTensor([16, 16], BF16))
    t = fw.add("t", "call_function", aten("t.default"), (wt,), val=FakeTensor([16, 16], BF16))
    mm = fw.add("mm", "call_function", aten("mm.default"), (x, t), val=FakeTensor([8, 16], BF16))
    fw.add("output", "output", "output", ((mm, x, None),))
    fw_gm = FakeGraphModule(fw)

    bw = FakeGraph()
    x2 = bw.add("primals_2", "placeholder", "primals_2", val=FakeTensor([8, 16], BF16))
    g = bw.add("tangents_1", "placeholder", "tangents_1", val=FakeTensor([8, 16], BF16))
    t1 = bw.add("t_1", "call_function", aten("t.default"), (g,), val=FakeTensor([16, 8], BF16))
    mm1 = bw.add("mm_1", "call_function", aten("mm.default"), (t1, x2), val=FakeTensor([16, 16], BF16))
    c1 = bw.add("_to_copy_1", "call_function", aten("_to_copy.default"), (mm1,), {"dtype": F32}, FakeTensor([16, 16], F32))
    rs = bw.add("reduce_scatter_tensor", "call_function", RS, (c1, "avg", 4, "0"), val=FakeTensor([4, 16], F32))
    wr = bw.add("wait_tensor_1", "call_function", WAIT, (rs,), val=FakeTensor([4, 16], F32))
    bw.add("output", "output", "output", ((None, wr),))
    bw_gm = FakeGraphModule(bw)
    return fw_gm, bw_gm


def simple(out):
    """Dumps the tiny step with a fake estimator, and the forward again with the default one."""
    fw_gm, bw_gm = _simple_graphs()
    ws = {"fw": fx.infer_world_size(fw_gm), "bw": fx.infer_world_size(bw_gm)}
    fw_path, bw_path = os.path.join(out, "fw.json"), os.path.join(out, "bw.json")
    fx.dump_graph_module(fw_gm, "forward", ws["fw"], fw_path, source="fake simple fsdp", estimate_ms=est_by_bytes)
    fx.dump_graph_module(bw_gm, "backward", ws["bw"], bw_path, source="fake simple fsdp", estimate_ms=est_by_bytes)
    # default estimator: torch's, which is absent here, so no est_ms at all
    plain = os.path.join(out, "fw_default_est.json")
    fx.dump_graph_module(fw_gm, "forward", 4, plain)
    return {"world_size": ws, "files": [fw_path, bw_path], "default_est_file": plain}


def fixture(out):
    """Torch-like versions of fixture nodes (tiny_4layer_fw.json i 0-3 and 40-57, plus attention
    and nll_loss with the tuples torch's meta['val'] really holds)."""
    g = FakeGraph()
    p1 = g.add("primals_1", "placeholder", "primals_1", val=FakeTensor([4, 256], I64))
    p2 = g.add("primals_2", "placeholder", "primals_2", val=FakeTensor([64, 256], F32))
    p3 = g.add("primals_3", "placeholder", "primals_3", val=FakeTensor([32], F32))
    p4 = g.add("primals_4", "placeholder", "primals_4", val=FakeTensor([32, 256], F32))
    cp = lambda name, src, shape: g.add(name, "call_function", aten("_to_copy.default"), (src,), {"dtype": BF16}, FakeTensor(shape, BF16))  # noqa: E731
    c0 = cp("_to_copy", p2, [64, 256])
    a0 = g.add("all_gather_into_tensor", "call_function", AG, (c0, 8, "0"), val=FakeTensor([512, 256], BF16))
    w0 = g.add("wait_tensor", "call_function", WAIT, (a0,), val=FakeTensor([512, 256], BF16))
    emb = g.add("embedding", "call_function", aten("embedding.default"), (w0, p1), val=FakeTensor([4, 256, 256], BF16))
    c1 = cp("_to_copy_1", p3, [32])
    a1 = g.add("all_gather_into_tensor_1", "call_function", AG, (c1, 8, "0"), val=FakeTensor([256], BF16))
    w1 = g.add("wait_tensor_1", "call_function", WAIT, (a1,), val=FakeTensor([256], BF16))
    rms = g.add("_fused_rms_norm", "call_function", aten("_fused_rms_norm.default"), (emb, [256], w1, 1e-05),
                val=(FakeTensor([4, 256, 256], BF16), FakeTensor([4, 256, 1], F32)))
    gi = g.add("getitem", "call_function", operator.getitem, (rms, 0), val=FakeTensor([4, 256, 256], BF16))
    gi1 = g.add("getitem_1", "call_function", operator.getitem, (rms, 1), val=FakeTensor([4, 256, 1], F32))
    g.add("detach_9", "call_function", aten("detach.default"), (gi1,), val=FakeTensor([4, 256, 1], F32))
    c2 = cp("_to_copy_2", p4, [32, 256])
    a2 = g.add("all_gather_into_tensor_2", "call_function", AG, (c2, 8, "0"), val=FakeTensor([256, 256], BF16))
    w2 = g.add("wait_tensor_2", "call_function", WAIT, (a2,), val=FakeTensor([256, 256], BF16))
    t = g.add("t", "call_function", aten("t.default"), (w2,), val=FakeTensor([256, 256], BF16))
    v = g.add("view", "call_function", aten("view.default"), (gi, [1024, 256]), val=FakeTensor([1024, 256], BF16))
    mm = g.add("mm", "call_function", aten("mm.default"), (v, t), val=FakeTensor([1024, 256], BF16))
    g.add("_unsafe_view", "call_function", aten("_unsafe_view.default"), (mm, [4, 256, 256]), val=FakeTensor([4, 256, 256], BF16))
    # attention inputs named as in the fixture (their own producers are not part of this excerpt)
    q = FakeNode("transpose", "call_function", aten("transpose.int"))
    k = FakeNode("view_6", "call_function", aten("view.default"))
    vv = FakeNode("view_7", "call_function", aten("view.default"))
    # cudnn attention's 9 outputs: out, lse, cum_seq_q/k (undefined), max_q/k (SymInt), seed, offset, debug mask (undefined)
    g.add("_scaled_dot_product_cudnn_attention", "call_function", aten("_scaled_dot_product_cudnn_attention.default"),
          (q, k, vv, None, True, 0.0, True), {"scale": 0.17677669529663687},
          val=(FakeTensor([4, 8, 256, 32], BF16), FakeTensor([4, 8, 256, 1], F32), None, None, FakeSymInt(256),
               FakeSymInt(256), FakeTensor([], I64), FakeTensor([], I64), None))
    lsm = FakeNode("_log_softmax", "call_function", aten("_log_softmax.default"))
    tgt = FakeNode("view_54", "call_function", aten("view.default"))
    g.add("nll_loss_forward", "call_function", aten("nll_loss_forward.default"), (lsm, tgt, None, 1, -100),
          val=(FakeTensor([], F32), FakeTensor([], F32)))
    path = os.path.join(out, "fixture_excerpt.json")
    fx.dump_graph_module(FakeGraphModule(g), "forward", 8, path, source="excerpt", estimate_ms=lambda n: 0.5)
    return {"file": path}


def errors(out):
    """The messages dump_graph_module raises for a bad graph kind and a bad world size."""
    gm = FakeGraphModule(FakeGraph())
    msgs = []
    for kind, ws in (("sideways", 8), ("forward", 0), ("forward", True)):
        try:
            fx.dump_graph_module(gm, kind, ws, os.path.join(out, "never.json"))
            msgs.append(None)
        except ValueError as e:
            msgs.append(str(e))
    return {"messages": msgs, "wrote": os.path.exists(os.path.join(out, "never.json"))}


def backend(out):
    """fx_dump_backend under stand-in torch modules: aot_autograd hands the compilers a forward
    and a backward graph per dynamo graph; the backend must dump both and run them unchanged."""
    import types

    calls = []
    state = {"rank": 0}

    def aot_autograd(fw_compiler, bw_compiler, **kw):
        def run(gm, example_inputs):
            fw = fw_compiler(gm.fw, example_inputs)
            bw = bw_compiler(gm.bw, example_inputs)
            calls.append(sorted(kw))
            return fw, bw

        return run

    def make_boxed_func(f):
        f_boxed = lambda args: f(*args)  # noqa: E731
        f_boxed._boxed_call = True
        return f_boxed

    dist = types.SimpleNamespace(is_available=lambda: True, is_initialized=lambda: True,
                                 get_rank=lambda: state["rank"], get_world_size=lambda: 4)
    torch = types.ModuleType("torch")
    torch.__version__ = "0.0-fake"
    torch.distributed = dist
    mods = {"torch": torch, "torch.distributed": dist, "functorch": types.ModuleType("functorch"),
            "functorch.compile": types.SimpleNamespace(make_boxed_func=make_boxed_func),
            "torch._dynamo": types.ModuleType("torch._dynamo"), "torch._dynamo.backends": types.ModuleType("b"),
            "torch._dynamo.backends.common": types.SimpleNamespace(aot_autograd=aot_autograd)}
    sys.modules.update(mods)

    fw_gm, bw_gm = _simple_graphs()
    for gm, tag in ((fw_gm, "fw"), (bw_gm, "bw")):
        gm.forward = (lambda t: (lambda *a: f"ran {t} with {len(a)} inputs"))(tag)
    dyn = types.SimpleNamespace(fw=fw_gm, bw=bw_gm)
    be = fx.fx_dump_backend(os.path.join(out, "be"), keep_inference_input_mutations=True)
    fw_run, bw_run = be(dyn, [1, 2])
    results = [fw_run([1, 2]), bw_run([3])]
    be(dyn, [])  # a second dynamo graph (after a graph break)
    state["rank"] = 1
    be(dyn, [])  # other ranks write nothing
    be_all = fx.fx_dump_backend(os.path.join(out, "be_all"), all_ranks=True, world_size=4, source="mine")
    be_all(dyn, [])
    files = sorted(os.listdir(os.path.join(out, "be"))), sorted(os.listdir(os.path.join(out, "be_all")))
    return {"results": results, "aot_kwargs": calls[0], "files": files[0], "files_all": files[1],
            "dir": os.path.join(out, "be"), "dir_all": os.path.join(out, "be_all")}


def pass_input(out):
    """A fake OverlapScheduler after alignment: dump_pass_input writes its graph with its estimates."""
    import types

    fw_gm, bw_gm = _simple_graphs()
    files = []
    for gm in (fw_gm, bw_gm):
        nodes = list(gm.graph.nodes)
        by = {n.name: n for n in nodes}
        est = {n: 0.25 for n in nodes if n.op == "call_function"}
        for n in nodes:
            if n.name.startswith("t") and n.op == "call_function":
                est[n] = 0.0  # views cost nothing
        del est[next(n for n in nodes if n.name.startswith("_to_copy"))]  # a node torch left unestimated
        coll = by.get("all_gather_into_tensor") or by["reduce_scatter_tensor"]
        wait = by.get("wait_tensor") or by["wait_tensor_1"]
        est[coll] = 1.5
        mm = by.get("mm") or by["mm_1"]
        sched = types.SimpleNamespace(
            gm=gm, node_estimations=est, compute_nodes=[mm],
            collective_info={coll: types.SimpleNamespace(wait_node=wait, size_bytes=1280)},
        )
        path = os.path.join(out, f"pass_{len(files)}.json")
        fx.dump_pass_input(sched, path, latency_ms=lambda n: 0.01)
        files.append(path)
    return {"files": files}


class FakeMesh:
    """A DeviceMesh: dim names, sizes, one process group per dim (named as torch names them), its root."""

    def __init__(self, dims, root=None):
        self.mesh_dim_names = tuple(dims)
        self._dims, self._root = dims, root

    def size(self, i):
        return list(self._dims.values())[i][0]

    def get_group(self, name):
        return types_ns(group_name=self._dims[name][1])

    def _get_root_mesh(self):
        return self._root or self


def types_ns(**kw):
    import types

    return types.SimpleNamespace(**kw)


AR = FakeOp("_c10d_functional.all_reduce.default")


def _tp_graph():
    """A forward on (dp_shard 2, tp 2): a dp_shard all-gather (group '1', size argument 2) and a tp
    all-reduce (group '3', no size argument: only the group knows it)."""
    g = FakeGraph()
    w = g.add("primals_1", "placeholder", "primals_1", val=FakeTensor([8, 16], BF16))
    x = g.add("primals_2", "placeholder", "primals_2", val=FakeTensor([4, 16], BF16))
    g.add("primals_3", "placeholder", "primals_3", val=types_ns(kind="opaque mesh"))
    ag = g.add("all_gather_into_tensor", "call_function", AG, (w, 2, "1"), val=FakeTensor([16, 16], BF16))
    wt = g.add("wait_tensor", "call_function", WAIT, (ag,), val=FakeTensor([16, 16], BF16))
    mm = g.add("mm", "call_function", aten("mm.default"), (x, wt), val=FakeTensor([4, 16], BF16))
    ar = g.add("all_reduce", "call_function", AR, (mm, "sum", "3"), val=FakeTensor([4, 16], BF16))
    wr = g.add("wait_tensor_1", "call_function", WAIT, (ar,), val=FakeTensor([4, 16], BF16))
    # a flattened mesh's group ('9', as torchtitan's dp_shard_cp with cp 1): dp_shard's ranks under another name
    ag2 = g.add("all_gather_into_tensor_1", "call_function", AG, (w, 2, "9"), val=FakeTensor([16, 16], BF16))
    g.add("wait_tensor_2", "call_function", WAIT, (ag2,), val=FakeTensor([16, 16], BF16))
    sp = g.add("split", "call_function", aten("split.Tensor"), (wr, 2),
               val=(FakeTensor([2, 16], BF16), FakeTensor([2, 16], BF16)))
    g.add("output", "output", "output", ((sp,),))
    return FakeGraphModule(g)


def mesh(out):
    """Group fields of collectives: on a 2-D mesh (found through a DTensor's sub-mesh), a 1-D one, none."""
    root = FakeMesh({"dp_shard": (2, "1"), "cp": (1, "5"), "tp": (2, "3")})  # a cp of 1 splits nothing
    sub = FakeMesh({"tp": (2, "3")}, root=root)
    found = fx.find_device_mesh([FakeTensor([1], BF16), types_ns(device_mesh=sub), sub])
    sizes = {"1": 2, "3": 2, "9": 2}.get
    ranks = {"1": (0, 2), "3": (0, 1), "9": (0, 2)}.get
    gm = _tp_graph()
    paths = {k: os.path.join(out, f"mesh_{k}.json") for k in ("2d", "2d_no_resolver", "1d", "none")}
    fx.dump_graph_module(gm, "forward", 4, paths["2d"], mesh=found, group_size_of=sizes, group_ranks_of=ranks,
                         estimate_ms=None)
    fx.dump_graph_module(gm, "forward", 4, paths["2d_no_resolver"], mesh=root, group_size_of=None, estimate_ms=None)
    one = FakeMesh({"fsdp": (4, "1")})
    fx.dump_graph_module(gm, "forward", 4, paths["1d"], mesh=one, group_size_of=lambda n: 4, estimate_ms=None)
    fx.dump_graph_module(gm, "forward", 4, paths["none"], group_size_of=None, estimate_ms=None)
    try:
        fx.dump_graph_module(gm, "forward", 8, os.path.join(out, "never.json"), mesh=root, group_size_of=sizes)
        err = None
    except ValueError as e:
        err = str(e)
    return {"found_root": found is root, "files": paths, "error": err,
            "wrote": os.path.exists(os.path.join(out, "never.json"))}


if __name__ == "__main__":
    mode, out_dir = sys.argv[1], sys.argv[2]
    modes = {"simple": simple, "fixture": fixture, "errors": errors, "backend": backend, "pass_input": pass_input,
             "mesh": mesh}
    print(json.dumps(modes[mode](out_dir)))
