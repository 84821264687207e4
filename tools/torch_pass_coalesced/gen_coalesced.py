#!/usr/bin/env python3
"""Runs the torch_pass reference generator (../shared/reference/torch_pass/gen_1d.py) with
bucket_mode="coalesced" on the shapes test/fixtures/torch_pass/coalesced/README.md lists.

gen_1d.py takes pass arguments through --knobs but only the shapes in its own CONFIGS; this wrapper
adds the fixtures' shapes to CONFIGS and otherwise runs the generator unchanged (same runtime
function, patches and capture hooks), with --knobs '{"bucket_mode": "coalesced"}' merged into any
--knobs given.

Usage: gen_coalesced.py GEN_1D_PY --group A|B --world W --cfg NAME --var recompute|saved --out DIR
"""
import json, os, sys

SHAPES = {  # name: dim, layers, heads, kv heads, ffn, vocab, seq, batch
    "d1024_2layer_seq512": (1024, 2, 8, 2, 2816, 16000, 512, 1),
    "d1024_8layer_seq512": (1024, 8, 8, 2, 2816, 16000, 512, 1),
    "d2048_3layer_seq512": (2048, 3, 16, 4, 5632, 32000, 512, 1),
}

gen = sys.argv[1]
argv = sys.argv[2:]
knobs = {}
if "--knobs" in argv:
    k = argv.index("--knobs")
    knobs = json.loads(argv[k + 1])
    del argv[k:k + 2]
knobs["bucket_mode"] = "coalesced"
argv += ["--knobs", json.dumps(knobs), "--tag", "coalesced"]
src = open(gen).read()
marker = '\nif __name__ == "__main__":'
assert marker in src, "gen_1d.py: no __main__ block"
extra = "".join(
    f"\nCONFIGS[{name!r}] = Cfg(dim={d}, n_layers={l}, n_heads={h}, n_kv_heads={kv}, ffn={f}, "
    f"vocab={v}, seq={s}, batch={b})"
    for name, (d, l, h, kv, f, v, s, b) in SHAPES.items())
src = src.replace(marker, extra + "\n" + marker, 1)
sys.argv = [gen] + argv
code = compile(src, os.path.abspath(gen), "exec")
exec(code, {"__name__": "__main__", "__file__": os.path.abspath(gen)})
