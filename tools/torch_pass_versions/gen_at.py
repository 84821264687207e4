#!/usr/bin/env python3
"""Runs a torch_pass reference generator (../shared/reference/torch_pass/gen_1d.py or gen_2d.py) under a
newer torch (2.14.x, 2.15.0); for gen_1d.py, on the shapes test/fixtures/torch_pass/prebucket/README.md lists.

The generators were written for torch 2.13. These things change here, nothing else (same runtime
function, capture hooks and pass arguments):
  * gen_1d.py: the fixtures' shapes are added to its CONFIGS (as tools/torch_pass_coalesced/gen_coalesced.py does);
  * torch 2.15 logs the scheduler's summary in two lines ("Overlap scheduling results: ..." without
    the peaks, then "Overlap scheduling memory: original_peak_memory=..., rescheduled_peak_memory=...");
    parse_log reads that form into the same summary fields;
  * its patch 2 (torch's discarded roofline must not need triton on CPU) also covers torch 2.15's
    names: torch.utils._runtime_estimation.get_gpu_dram_gbps became get_device_dram_gbps, and
    get_device_tflops takes a device keyword. The patched values (4800 GB/s, 989 TFLOPS) only feed
    torch's logged roofline, never a decision (the custom estimator answers for every node).

Usage: gen_at.py GEN_1D_PY --group A --world W --cfg NAME --var recompute|saved --out DIR
       gen_at.py GEN_2D_PY --dp D --tp T --layers L --group CA --out DIR
"""
import os, sys

SHAPES = {  # name: dim, layers, heads, kv heads, ffn, vocab, seq, batch
    "d1024_2layer_seq512": (1024, 2, 8, 2, 2816, 16000, 512, 1),
    "d1024_8layer_seq512": (1024, 8, 8, 2, 2816, 16000, 512, 1),
    "d2048_3layer_seq512": (2048, 3, 16, 4, 5632, 32000, 512, 1),
}

# torch 2.15's two summary lines (overlap_scheduling.py, OverlapScheduler._log_final_results ff.)
PARSE_LOG_215 = r"""
_parse_log_213 = parse_log
_SUM_215 = re.compile(r"Overlap scheduling results: exposed=(\d+), bad_exposed=(\d+), potentially_hidden=(\d+), "
                      r"total_exposed_ms=([\d.]+), hideable_exposed_ms=([\d.]+), total_potential_exposed_ms=([\d.]+), "
                      r"wasted_compute_ms=([\d.]+)")
_MEM_215 = re.compile(r"Overlap scheduling memory: original_peak_memory=(\d+) bytes, rescheduled_peak_memory=(\d+) bytes")


def parse_log(text):
    res = _parse_log_213(text)
    m, mm = _SUM_215.search(text), _MEM_215.search(text)
    if "summary" not in res and m and mm:
        g = m.groups()
        res["summary"] = {
            "exposed": int(g[0]), "bad_exposed": int(g[1]), "potentially_hidden": int(g[2]),
            "original_peak_memory": int(mm.group(1)), "rescheduled_peak_memory": int(mm.group(2)),
            "total_exposed_ms": float(g[3]), "hideable_exposed_ms": float(g[4]),
            "total_potential_exposed_ms": float(g[5]), "wasted_compute_ms": float(g[6])}
    return res
"""

gen = sys.argv[1]
src = open(gen).read()
old_patch = "rte.get_device_tflops = lambda dtype: 989.0"
assert old_patch in src, "generator: patch 2 not found"
src = src.replace(old_patch, (
    "rte.get_device_tflops = lambda dtype, *a, **k: 989.0\n"
    "if hasattr(rte, 'get_device_dram_gbps'):\n"
    "    rte.get_device_dram_gbps = lambda *a, **k: 4800.0\n"
    "    PATCHES.append('torch >= 2.15: torch.utils._runtime_estimation.get_device_dram_gbps -> 4800')"), 1)
marker = '\nif __name__ == "__main__":'
assert marker in src, "generator: no __main__ block"
extra = "" if "\nclass Cfg" not in src else "".join(
    f"\nCONFIGS[{name!r}] = Cfg(dim={d}, n_layers={l}, n_heads={h}, n_kv_heads={kv}, ffn={f}, "
    f"vocab={v}, seq={s}, batch={b})"
    for name, (d, l, h, kv, f, v, s, b) in SHAPES.items())
src = src.replace(marker, extra + "\n" + PARSE_LOG_215 + "\n" + marker, 1)
sys.argv = [gen] + sys.argv[2:]
code = compile(src, os.path.abspath(gen), "exec")
exec(code, {"__name__": "__main__", "__file__": os.path.abspath(gen)})
