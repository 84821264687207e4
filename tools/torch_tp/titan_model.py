"""torchtitan's Llama3 and its parallelisation, re-implemented on torch's own APIs for the tracers in
this folder (trace_tp.py, joint_pass.py): the model (torchtitan/models/llama3/model/model.py), TP
(infra/parallelize.py::apply_tp), op SAC (distributed/activation_checkpoint.py::_apply_op_sac) and
SimpleFSDP's 2-D parameters (experiments/simple_fsdp/simple_fsdp.py::data_parallel). See
trace_tp.py's docstring for what each follows. Definitions only: the scripts set up the fake
process group and the mesh. Parameters and activations live on the "meta" device.
"""
import collections

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.tensor import DTensor, Replicate, Shard, Partial
from torch.distributed.tensor._dtensor_spec import DTensorSpec
from torch.distributed.tensor.placement_types import _StridedShard
from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel, SequenceParallel,
                                               PrepareModuleInput, parallelize_module)
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts

DEV = "meta"


class Args:
    def __init__(self, dim, n_layers, n_heads, n_kv_heads, ffn, vocab, seq, batch):
        self.__dict__.update(dim=dim, n_layers=n_layers, n_heads=n_heads, n_kv_heads=n_kv_heads,
                             ffn=ffn, vocab=vocab, seq=seq, batch=batch)


def precompute_freqs_cis(dim, end, theta=500000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2, device=DEV)[: dim // 2].float() / dim))
    t = torch.arange(end, device=DEV)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    seqlen = xq_.shape[1]
    fc = freqs_cis[0:seqlen].view(1, seqlen, 1, xq_.shape[-1])
    xq_out = torch.view_as_real(xq_ * fc).flatten(3)
    xk_out = torch.view_as_real(xk_ * fc).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def repeat_kv(x, n_rep):
    bs, slen, n_kv, hd = x.shape
    if n_rep == 1:
        return x
    return x.unsqueeze(3).expand(bs, slen, n_kv, n_rep, hd).reshape(bs, slen, n_kv * n_rep, hd)


def sdpa(q, k, v):
    # what F.scaled_dot_product_attention dispatches to on an H100/H200 (cuDNN backend), as in
    # run_pass_v2.py; on meta/CPU F.sdpa would pick the math kernel instead.
    return torch.ops.aten._scaled_dot_product_cudnn_attention(q, k, v, None, True, 0.0, True)[0]


class Attention(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.n_heads, self.n_kv_heads = a.n_heads, a.n_kv_heads
        self.n_rep = a.n_heads // a.n_kv_heads
        self.head_dim = a.dim // a.n_heads
        self.wq = nn.Linear(a.dim, a.n_heads * self.head_dim, bias=False, device=DEV)
        self.wk = nn.Linear(a.dim, a.n_kv_heads * self.head_dim, bias=False, device=DEV)
        self.wv = nn.Linear(a.dim, a.n_kv_heads * self.head_dim, bias=False, device=DEV)
        self.wo = nn.Linear(a.n_heads * self.head_dim, a.dim, bias=False, device=DEV)
        self.q_norm = nn.Identity()
        self.k_norm = nn.Identity()

    def forward(self, x, freqs_cis, attention_masks=None, positions=None):
        bs, seqlen, _ = x.shape
        xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
        xq = xq.view(bs, seqlen, -1, self.head_dim)
        xk = xk.view(bs, seqlen, -1, self.head_dim)
        xv = xv.view(bs, seqlen, -1, self.head_dim)
        xq, xk = apply_rotary_emb(self.q_norm(xq), self.k_norm(xk), freqs_cis)
        keys = repeat_kv(xk, self.n_rep)
        values = repeat_kv(xv, self.n_rep)
        out = sdpa(xq.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2))
        out = out.transpose(1, 2).contiguous().view(bs, seqlen, -1)
        return self.wo(out)


class FeedForward(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.w1 = nn.Linear(a.dim, a.ffn, bias=False, device=DEV)
        self.w2 = nn.Linear(a.ffn, a.dim, bias=False, device=DEV)
        self.w3 = nn.Linear(a.dim, a.ffn, bias=False, device=DEV)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.attention = Attention(a)
        self.feed_forward = FeedForward(a)
        self.attention_norm = nn.RMSNorm(a.dim, eps=1e-5, device=DEV)
        self.ffn_norm = nn.RMSNorm(a.dim, eps=1e-5, device=DEV)

    def forward(self, x, freqs_cis):
        h = x + self.attention(self.attention_norm(x), freqs_cis, None, None)
        return h + self.feed_forward(self.ffn_norm(h))


class Llama(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.tok_embeddings = nn.Embedding(a.vocab, a.dim, device=DEV)
        self.register_buffer("freqs_cis", precompute_freqs_cis(a.dim // a.n_heads, a.seq * 2),
                             persistent=False)
        self.layers = nn.ModuleDict({str(i): Block(a) for i in range(a.n_layers)})
        self.norm = nn.RMSNorm(a.dim, eps=1e-5, device=DEV)
        self.output = nn.Linear(a.dim, a.vocab, bias=False, device=DEV)

    def forward(self, tokens):
        h = self.tok_embeddings(tokens)
        for layer in self.layers.values():
            h = layer(h, self.freqs_cis)
        h = self.norm(h)
        return self.output(h)


# ------------------------------------------------------------------ TP (apply_tp) ----------
def apply_tp(model, tp_mesh):
    parallelize_module(model, tp_mesh, {
        "tok_embeddings": RowwiseParallel(input_layouts=Replicate(), output_layouts=Shard(1)),
        "norm": SequenceParallel(),
        "output": ColwiseParallel(input_layouts=Shard(1), output_layouts=Shard(-1),
                                  use_local_output=False),           # loss_parallel=True
    })
    for block in model.layers.values():
        parallelize_module(block, tp_mesh, {
            "attention_norm": SequenceParallel(),
            "attention": PrepareModuleInput(input_layouts=(Shard(1), None, None, None),
                                            desired_input_layouts=(Replicate(), None, None, None)),
            "attention.wq": ColwiseParallel(),
            "attention.wk": ColwiseParallel(),
            "attention.wv": ColwiseParallel(),
            "attention.wo": RowwiseParallel(output_layouts=Shard(1)),
            "attention.q_norm": SequenceParallel(use_local_output=True),
            "attention.k_norm": SequenceParallel(use_local_output=True),
            "ffn_norm": SequenceParallel(),
            "feed_forward": PrepareModuleInput(input_layouts=(Shard(1),),
                                               desired_input_layouts=(Replicate(),)),
            "feed_forward.w1": ColwiseParallel(),
            "feed_forward.w2": RowwiseParallel(output_layouts=Shard(1)),
            "feed_forward.w3": ColwiseParallel(),
        })


# ------------------------------------------------------------------ SAC (apply_ac "op") ----
_op_sac_save_list = {
    torch.ops.aten.mm.default,
    torch.ops.aten._scaled_dot_product_efficient_attention.default,
    torch.ops.aten._scaled_dot_product_flash_attention.default,
    torch.ops.aten._scaled_dot_product_cudnn_attention.default,
    torch.ops.aten._scaled_dot_product_attention_math.default,
    torch.ops.aten._scaled_dot_product_fused_attention_overrideable.default,
    torch.ops._c10d_functional.reduce_scatter_tensor.default,
    torch.ops.aten.max.default,
}
# simple_fsdp/activation_checkpoint.py (older SimpleFSDP-specific variant): PREFER_SAVE for these
_op_simple_fsdp_save_list = {
    torch.ops._c10d_functional.all_gather_into_tensor.default,
    torch.ops._c10d_functional.wait_tensor.default,
    torch.ops.aten._to_copy.default,
}


def apply_op_sac(block, simplefsdp_variant):
    def _get_custom_policy(meta):
        def _custom_policy(ctx, func, *args, **kwargs):
            if simplefsdp_variant and func in _op_simple_fsdp_save_list:
                return CheckpointPolicy.PREFER_SAVE
            mode = "recompute" if ctx.is_recompute else "forward"
            key = f"{mode}_mm_count"
            if func == torch.ops.aten.mm.default:
                meta[key] += 1
            to_save = func in _op_sac_save_list and not (
                func == torch.ops.aten.mm.default and meta[key] % 2 == 0)
            return CheckpointPolicy.MUST_SAVE if to_save else CheckpointPolicy.PREFER_RECOMPUTE
        return _custom_policy

    def context_fn():
        return create_selective_checkpoint_contexts(_get_custom_policy(collections.defaultdict(int)))

    return checkpoint_wrapper(block, context_fn=context_fn, preserve_rng_state=False)


# ------------------------------------------------------------------ SimpleFSDP -------------
class ReplicateComputation(nn.Module):
    """simple_fsdp.py::ReplicateComputation.replicate_compute, FSDP + TP branch."""

    def __init__(self, dp_mesh, param_dtype, reduce_dtype):
        super().__init__()
        self.dp_mesh = dp_mesh
        self.param_sharding = (Shard(0),)
        self.compute_placements = [Replicate()]
        self.grad_placements = [Partial(reduce_op="avg")]
        self.param_dtype, self.reduce_dtype = param_dtype, reduce_dtype

    def forward(self, x):
        sharded_local = x.to_local()
        sharded = DTensor.from_local(sharded_local, self.dp_mesh, self.param_sharding)
        replicated = sharded.redistribute(placements=self.compute_placements,
                                          forward_dtype=self.param_dtype,
                                          backward_dtype=self.reduce_dtype)
        local = replicated.to_local(grad_placements=self.grad_placements)
        non_dp_placements = tuple(x._spec.placements[-1:])
        non_dp_mesh = x._spec.mesh[tuple(x._spec.mesh.mesh_dim_names[-1:])]
        return DTensor.from_local(local, non_dp_mesh, non_dp_placements)


def _distribute_dtensor_2d(t, full_mesh):
    """simple_fsdp.py::_distribute_dtensor for FSDP(Shard(0)) over a TP DTensor (meta: no data)."""
    inner = t._spec
    split = inner.num_shards_map[0]
    dp_pl = _StridedShard(0, split_factor=split) if split > 1 else Shard(0)
    loc = t._local_tensor
    dp = full_mesh.size(0)  # the dp_shard dimension
    assert loc.shape[0] % dp == 0, (loc.shape, dp)
    new_local = torch.empty((loc.shape[0] // dp,) + tuple(loc.shape[1:]), device=DEV, dtype=loc.dtype)
    spec = DTensorSpec(mesh=full_mesh, placements=(dp_pl,) + tuple(inner.placements),
                       tensor_meta=inner.tensor_meta)
    return DTensor(new_local.requires_grad_(True), spec, requires_grad=True)


def data_parallel(model, full_mesh, dp_mesh, param_dtype=torch.bfloat16, reduce_dtype=torch.float32):
    for mod in list(model.modules()):
        if "SimpleFSDP" in mod.__class__.__name__:
            continue
        params = dict(mod.named_parameters(recurse=False))
        for name, p in params.items():
            assert isinstance(p, DTensor), name
            mod.register_parameter(name, nn.Parameter(_distribute_dtensor_2d(p, full_mesh)))
        if not params:
            continue
        rc = ReplicateComputation(dp_mesh, param_dtype, reduce_dtype)
        props = {pn: property(lambda self, pn=pn: rc(self._parameters[pn])) for pn in params}
        mod.__class__ = type(f"SimpleFSDP{mod.__class__.__name__}", (mod.__class__,), props)
    return model


# reshard_after_forward.py::annotate_fsdp_all_gather (reshard_after_forward=True)
def _is_fsdp_wait(node):
    if not (node.op == "call_function" and node.target == torch.ops._c10d_functional.wait_tensor.default):
        return False
    ag = node.args[0]
    if not (ag.op == "call_function" and ag.target == torch.ops._c10d_functional.all_gather_into_tensor.default):
        return False
    n = node.all_input_nodes[0]
    while len(n.all_input_nodes) == 1:
        if n.all_input_nodes[0].op == "placeholder":
            return True
        n = n.all_input_nodes[0]
    return False


def tag_fsdp_all_gathers(gm, reshard, stats, is_collective, coll_prefix):
    """SimpleFSDP's reshard_after_forward.py::annotate_fsdp_all_gather (run as functorch's joint_custom_pass):
    tag each parameter all-gather, its wait and views MUST_RECOMPUTE (reshard) or MUST_SAVE; count into stats."""

    def force(node):
        node.meta["recompute"] = CheckpointPolicy.MUST_RECOMPUTE if reshard else CheckpointPolicy.MUST_SAVE
        node.meta["ac_graph_id"] = 100000

    def tag_views(start, seen):
        if start in seen or len(start.users) != 1:
            return
        seen.add(start)
        user = next(iter(start.users))
        if user.op == "call_function" and getattr(user.target, "is_view", False):
            force(user)
            tag_views(user, seen)

    n_tagged = 0
    for node in gm.graph.nodes:
        if _is_fsdp_wait(node):
            ag = node.args[0]
            force(ag)
            force(node)
            n_tagged += 1
            tag_views(node, set())
            if (ag.all_input_nodes[0].op == "call_function"
                    and ag.args[0].target == torch.ops.prims.convert_element_type.default):
                force(ag.all_input_nodes[0])
    stats["fsdp_all_gathers_tagged"] = n_tagged
    stats["fsdp_all_gather_tag"] = "MUST_RECOMPUTE" if reshard else "MUST_SAVE"
    stats["joint_c10d_nodes_incl_wait"] = sum(
        1 for n in gm.graph.nodes if n.op == "call_function" and str(n.target).startswith(coll_prefix))
    stats["joint_collectives"] = collections.Counter(
        str(n.target) for n in gm.graph.nodes if is_collective(n))


def training_step(a, sac, mesh, dp_mesh, tp_mesh):
    """The model on the mesh (TP, op SAC unless sac is "none", SimpleFSDP) and torchtitan's loss step,
    with a batch of zero tokens and labels: (step, tokens, labels)."""
    model = Llama(a)
    apply_tp(model, tp_mesh)
    if sac != "none":
        for lid, blk in list(model.layers.named_children()):
            model.layers.register_module(lid, apply_op_sac(blk, sac == "op_simplefsdp"))
    data_parallel(model, mesh, dp_mesh)
    tokens = torch.zeros((a.batch, a.seq), dtype=torch.int64, device=DEV)
    labels = torch.zeros((a.batch, a.seq), dtype=torch.int64, device=DEV)

    def step(tokens, labels):
        pred = model(tokens)
        # torchtitan: F.cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1)) under
        # loss_parallel(). On the meta device aten.nll_loss is not decomposed into
        # nll_loss_forward (DTensor then rejects it), so spell it as the two ops it lowers to on
        # CUDA, exactly the ops loss_parallel() intercepts (_log_softmax, nll_loss_forward).
        logp = torch.log_softmax(pred.flatten(0, 1).float(), -1)
        return torch.ops.aten.nll_loss_forward(logp, labels.flatten(0, 1), None, 1, -100)[0]

    return step, tokens, labels
