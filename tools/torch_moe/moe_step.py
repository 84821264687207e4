# The MoE step gen_moe.py appends to gen_2d.py's machinery (it runs in that namespace: torch, nn, DEV, WORLD,
# GROUP_NAMES, GROUP_SIZES, make_compiler, annotate_fsdp_all_gather, functorch_config, CUR, ARGS, OUT).
import torch.distributed._functional_collectives as fcol

EP, EFSDP = 2, WORLD // 2
SPARSE = init_device_mesh("cpu", (EFSDP, EP), mesh_dim_names=("efsdp", "ep"))
DENSE_PG, EP_PG, EFSDP_PG = DP_MESH.get_group(), SPARSE["ep"].get_group(), SPARSE["efsdp"].get_group()
GROUP_NAMES.clear()
GROUP_SIZES.clear()
for pg, name, size in ((DENSE_PG, "dp_shard", WORLD), (EP_PG, "ep", EP), (EFSDP_PG, "efsdp", EFSDP)):
    GROUP_NAMES[pg.group_name] = name
    GROUP_SIZES[pg.group_name] = size
MOE = dict(dim=512, ffn=1024, experts=8, top_k=2, tokens=1024)
# MOE_SEND_WEIGHTS=1: dispatch also sends each routed row's gate weight in its own all_to_all_single (as
# DeepEP's dispatch carries topk_weights) and the experts' side applies it: two independent all-to-alls
# on ep per dispatch, which a bucketer that had a key for them could merge.
SEND_WEIGHTS = os.environ.get("MOE_SEND_WEIGHTS") == "1"


def gathered(shard, pg):
    """SimpleFSDP's parameter all-gather in bf16 (backward: reduce-scatter on the same group)."""
    return fcol.all_gather_tensor_autograd(shard.to(torch.bfloat16), 0, pg)


def sharded(*full, over):
    return nn.Parameter(torch.empty((full[0] // over,) + full[1:], device=DEV))


class MoEBlock(nn.Module):
    def __init__(self, m):
        super().__init__()
        d, f, e = m["dim"], m["ffn"], m["experts"]
        self.m, self.local = m, e // EP
        self.w_in = sharded(d, d, over=WORLD)
        self.router = sharded(e, d, over=WORLD)
        self.w_up = sharded(self.local * EFSDP, d, f, over=EFSDP)     # this ep rank's experts, on efsdp
        self.w_down = sharded(self.local * EFSDP, f, d, over=EFSDP)

    def forward(self, x):
        m, k = self.m, self.m["top_k"]
        h = x @ gathered(self.w_in, DENSE_PG).t()
        scores = torch.softmax((h @ gathered(self.router, DENSE_PG).t()).float(), -1)
        top_v, top_i = torch.topk(scores, k, -1)
        order = torch.argsort(top_i.flatten(), stable=True)
        src_token = order // k
        routed = fcol.all_to_all_single_autograd(h[src_token], None, None, EP_PG)   # dispatch
        grouped = routed.view(self.local, -1, m["dim"])
        up = torch.nn.functional.silu(torch.bmm(grouped, gathered(self.w_up, EFSDP_PG)[: self.local]))
        down = torch.bmm(up, gathered(self.w_down, EFSDP_PG)[: self.local]).reshape(-1, m["dim"])
        gate = top_v.flatten()[order].unsqueeze(-1).to(down.dtype)
        if SEND_WEIGHTS:
            gate_there = fcol.all_to_all_single_autograd(gate, None, None, EP_PG)    # dispatch's weights
            down = down * gate_there
        back = fcol.all_to_all_single_autograd(down, None, None, EP_PG)              # combine
        weighted = back if SEND_WEIGHTS else back * gate
        return x + torch.zeros_like(h).index_add(0, src_token, weighted)


class TinyMoE(nn.Module):
    def __init__(self, m, n_layers):
        super().__init__()
        self.layers = nn.ModuleList(MoEBlock(m) for _ in range(n_layers))
        self.w_out = sharded(m["dim"], m["dim"], over=WORLD)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return (x @ gathered(self.w_out, DENSE_PG).t()).float().pow(2).mean()


def trace_moe(n_layers, tag):
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = TinyMoE(MOE, n_layers)
    x = torch.empty((MOE["tokens"], MOE["dim"]), dtype=torch.bfloat16, device=DEV)
    from torch._dynamo.backends.common import aot_autograd
    meta = {"cfg": dict(MOE, n_layers=n_layers), "world": WORLD, "recompute_ag": CUR["reshard"],
            "mesh": {"dp_shard": WORLD, "efsdp": EFSDP, "ep": EP}}
    backend = aot_autograd(fw_compiler=make_compiler(tag, "fw", meta), bw_compiler=make_compiler(tag, "bw", meta),
                           keep_inference_input_mutations=True)
    compiled = torch.compile(model, backend=backend, fullgraph=True, dynamic=False)
    with functorch_config.patch("joint_custom_pass", annotate_fsdp_all_gather):
        compiled(x).backward()


if __name__ == "__main__":
    CUR["reshard"] = True
    trace_moe(ARGS.layers, ARGS.tag or f"moe_{ARGS.layers}layer" + ("_sendw" if SEND_WEIGHTS else ""))
    print("done", flush=True)
