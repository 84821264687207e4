#!/usr/bin/env python3
"""torch's schedule_overlap_bucketing on a tiny MoE step (forward and backward), traced on a fake process group.

Runs the reference 2-D generator (../shared/reference/torch_pass/gen_2d.py: pass arguments, fixed runtime
estimate_ms, capture hooks, dump and result writer) unchanged, with its Llama trace replaced by the MoE step
below (its __main__ block is cut off; gen_at.py's torch 2.15 patches are applied the same way).

Model (world 4, dense mesh dp_shard 4; sparse mesh efsdp 2 x ep 2, as torchtitan's ParallelDims lays it out):
  per layer: h = x @ W_in^T (dense); router logits = h @ W_r^T; softmax + top-k; tokens sorted by expert;
  dispatch all_to_all_single on ep; grouped expert matmuls (bmm over the local experts); combine
  all_to_all_single on ep; unsort + weighted index_add; residual. Loss: mean square of x @ W_out^T.
  Every weight is a SimpleFSDP-style shard all-gathered in bf16 by torch.distributed._functional_collectives'
  autograd ops: dense weights on dp_shard, expert weights on efsdp (backward: reduce-scatter on the same group).
  The reshard-after-forward joint pass (gen_2d.py's annotate_fsdp_all_gather) makes the backward re-gather.

Usage: [MOE_SEND_WEIGHTS=1] gen_moe.py GEN_2D_PY --layers 2 [--tag NAME] --out DIR [--knobs JSON]
"""
import os, sys

gen = sys.argv[1]
src = open(gen).read()
marker = '\nif __name__ == "__main__":'
assert marker in src, "generator: no __main__ block"
src = src[: src.index(marker)]
# torch 2.15 renamed roofline helpers and split the summary log line: the same patches as gen_at.py
here = os.path.dirname(os.path.abspath(__file__))
at = open(os.path.join(here, "..", "torch_pass_versions", "gen_at.py")).read()
ns_at = {}
exec(at[at.index("PARSE_LOG_215 = "): at.index("\ngen = sys.argv[1]")], ns_at)
old_patch = "rte.get_device_tflops = lambda dtype: 989.0"
if old_patch in src:
    src = src.replace(old_patch, (
        "rte.get_device_tflops = lambda dtype, *a, **k: 989.0\n"
        "if hasattr(rte, 'get_device_dram_gbps'):\n"
        "    rte.get_device_dram_gbps = lambda *a, **k: 4800.0\n"), 1)
src += "\n" + ns_at["PARSE_LOG_215"] + "\n" + open(os.path.join(here, "moe_step.py")).read()
sys.argv = [gen, "--dp", "4", "--tp", "1", "--group", "CA"] + sys.argv[2:]
exec(compile(src, os.path.abspath(gen), "exec"), {"__name__": "__main__", "__file__": os.path.abspath(gen)})
