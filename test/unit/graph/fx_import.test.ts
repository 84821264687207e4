// Import of torch FX dumps: the fixtures (torch 2.11, 4-layer Llama, 8 ranks) and malformed files.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ImportError } from '../../../src/errors';
import { importFxGraph, type StepGraph } from '../../../src/graph';
import { MATMUL_LIKE_OPS } from '../../../src/graph/ops';
import { isTopologicalOrder } from '../../../src/graph/toposort';
import { verifyGraph } from '../../../src/graph/verify';
import { fixtureUrl } from '../../helpers/fixtures';
import type { RawFxDump } from '../../helpers/fx_raw';

const FX_DIR = fixtureUrl('fx/');
const load = (f: string): RawFxDump => JSON.parse(readFileSync(new URL(f, FX_DIR), 'utf8'));
const FW = load('tiny_4layer_fw.json');
const BW = load('tiny_4layer_bw.json');
const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x));
const count = (r: RawFxDump, re: RegExp) => r.nodes.filter((n) => re.test(n.target)).length;

function imported(x: unknown): StepGraph {
  const r = importFxGraph(x);
  if (!r.ok) throw r.error;
  return r.value;
}

function importError(x: unknown): ImportError {
  const r = importFxGraph(x);
  expect(r.ok).toBe(false);
  if (r.ok) throw new Error('unreachable');
  expect(r.error).toBeInstanceOf(ImportError);
  return r.error;
}

describe('importFxGraph on the torch fixtures', () => {
  it.each([
    ['forward', FW],
    ['backward', BW],
  ] as const)('imports the %s graph with the collectives the file has', (_, raw) => {
    const g = verifyGraph(imported(raw));
    const ag = count(raw, /all_gather_into_tensor/);
    const rs = count(raw, /reduce_scatter_tensor/);
    const kinds = (k: string) => g.nodes.filter((n) => n.kind === k).length;
    expect(kinds('all_gather')).toBe(ag);
    expect(kinds('reduce_scatter')).toBe(rs);
    expect(kinds('wait')).toBe(count(raw, /wait_tensor/));
    expect(kinds('wait')).toBe(ag + rs);
    expect(g.meta).toMatchObject({ model: 'fx-import', worldSize: 8, batch: 4, seqLen: 256 });
    const mm = count(raw, /aten\.(mm|addmm|bmm)\./) + count(raw, /scaled_dot_product.*attention/);
    expect(g.nodes.filter((n) => n.matmulLike).length).toBe(mm);
    for (const n of g.nodes) expect(n.matmulLike).toBe(n.kind === 'compute' && MATMUL_LIKE_OPS.has(n.op));
  });

  it('sees 39 forward all-gathers, 9 backward re-gathers and 39 reduce-scatters', () => {
    expect(count(FW, /all_gather_into_tensor/)).toBe(39);
    const g = imported([FW, BW]);
    expect(g.nodes.filter((n) => n.kind === 'all_gather' && n.phase === 'forward').length).toBe(39);
    expect(g.nodes.filter((n) => n.kind === 'all_gather' && n.phase === 'backward').length).toBe(9);
    expect(g.nodes.filter((n) => n.kind === 'reduce_scatter').length).toBe(39);
  });

  it("keeps torch's est_ms and sizes collectives from shape and dtype", () => {
    const g = imported(FW);
    for (const raw of FW.nodes.filter((n) => /all_gather_into_tensor/.test(n.target))) {
      const n = g.nodes.find((x) => x.name === raw.name);
      expect(n?.estMs).toBe(raw.est_ms);
      const bytes = (raw.shape as number[]).reduce((a, b) => a * b, 1) * 2; // bf16
      expect(n?.collective).toMatchObject({
        kind: 'all_gather',
        group: 'dp',
        groupSize: 8,
        dtype: 'bf16',
        outputBytes: bytes,
        inputBytes: bytes / 8,
      });
    }
    // every forward all-gather reads a cast of a parameter placeholder: 39 parameters
    expect(g.params.length).toBe(39);
    expect(g.params.find((p) => p.name === 'primals_2')).toMatchObject({ shape: [512, 256], shardRows: 64 });
  });

  it("computes mm FLOPs as 2·M·N·K from the file's shapes", () => {
    const g = imported(BW);
    const by = new Map(BW.nodes.map((n) => [n.name, n]));
    const mms = BW.nodes.filter((n) => n.target === 'aten.mm.default');
    expect(mms.length).toBe(58);
    for (const raw of mms) {
      const a = by.get(raw.args[0])?.shape as number[];
      const [M, N] = raw.shape as number[];
      expect(g.nodes.find((x) => x.name === raw.name)?.flops).toBe(2 * M * N * a[1]);
    }
  });

  it('counts causal attention: 4·B·H·S²·hd/2 forward, 2.5× that backward', () => {
    const g = imported([FW, BW]);
    const fwd = (4 * 4 * 8 * 256 * 256 * 32) / 2;
    const attn = g.nodes.filter((n) => n.op === 'attention');
    const bwd = g.nodes.filter((n) => n.op === 'attention_bwd');
    expect(attn.length).toBe(4);
    expect(bwd.length).toBe(4);
    for (const n of attn) expect(n.flops).toBe(fwd);
    for (const n of bwd) expect(n.flops).toBe(2.5 * fwd);
  });

  it('joins forward and backward in either order: backward placeholders read forward tensors', () => {
    const a = imported([FW, BW]);
    const b = imported([BW, FW]);
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    const placeholders = BW.nodes.filter((n) => n.op === 'placeholder').length;
    expect(a.nodes.length).toBe(imported(FW).nodes.length + imported(BW).nodes.length);
    // only tangents_1 is a new input; everything else the backward reads was made in forward
    const inputs = Object.keys(a.tensors).filter((t) => !a.nodes.some((n) => n.outputs.includes(t)));
    expect(inputs.filter((t) => !/^primals_/.test(t))).toEqual(['tangents_1']);
    expect(placeholders).toBeGreaterThan(100);
    // colliding backward names are renamed
    expect(a.nodes.some((n) => n.name === 'all_gather_into_tensor_37.bw' && n.phase === 'backward')).toBe(true);
    expect(
      isTopologicalOrder(
        a,
        a.nodes.map((n) => n.id),
      ),
    ).toBe(true);
  });

  it('infers transformer blocks: 9 parameters per layer, both directions; embeddings/norm/output outside', () => {
    const g = imported([FW, BW]);
    for (const [phase, kind, perLayer, outside] of [
      ['forward', 'all_gather', 9, 3],
      ['backward', 'all_gather', 2, 1],
      ['backward', 'reduce_scatter', 9, 3],
    ] as const) {
      const coll = g.nodes.filter((n) => n.phase === phase && n.kind === kind);
      for (let l = 0; l < 4; l++)
        expect(coll.filter((n) => n.layer === l).length, `${phase} ${kind} layer ${l}`).toBe(perLayer);
      expect(coll.filter((n) => n.layer === undefined).length).toBe(outside);
    }
    // a layer's forward gathers are consecutive primals (torchtitan's parameter order)
    const l1 = g.nodes
      .filter((n) => n.kind === 'all_gather' && n.phase === 'forward' && n.layer === 1)
      .map((n) => Number(n.params?.[0].slice(8)));
    expect([...l1].sort((a, b) => a - b)).toEqual([12, 13, 14, 15, 16, 17, 18, 19, 20]);
    // every attention and its wait/cast chain sit in a layer; waits share their collective's layer
    for (const n of g.nodes.filter((x) => x.op === 'attention' || x.op === 'attention_bwd'))
      expect(n.layer).toBeDefined();
    for (const w of g.nodes.filter((x) => x.kind === 'wait'))
      expect(w.layer).toBe(g.nodes.find((c) => c.name === w.waitOf)?.layer);
  });

  it('accepts the dump as JSON text', () => {
    expect(importFxGraph(JSON.stringify(FW)).ok).toBe(true);
  });
});

describe('importFxGraph on malformed dumps', () => {
  const pos = (name: string, raw: RawFxDump = FW) => raw.nodes.findIndex((n) => n.name === name);

  it('rejects a wrong format string', () => {
    const e = importError({ ...FW, format: 'fx dump v2' });
    expect(e.where).toBe('format');
    expect(e.message).toContain('fsdp-sim fx dump v1');
  });

  it('names the node and field of a missing field', () => {
    const raw = clone(FW);
    const i = pos('mm');
    delete raw.nodes[i].shape;
    const e = importError(raw);
    expect(e.where).toBe(`nodes[${i}].shape`);
    expect(e.message).toContain(`node ${i} 'mm'`);
  });

  it('names the node of a bad shape', () => {
    const raw = clone(FW);
    const i = pos('embedding');
    raw.nodes[i].shape = [4, -256, 256];
    expect(importError(raw).where).toBe(`nodes[${i}].shape`);
  });

  it('rejects an all-gather whose shape is not world_size × its input', () => {
    const raw = clone(FW);
    const i = pos('all_gather_into_tensor');
    raw.nodes[i].shape = [256, 256];
    const e = importError(raw);
    expect(e.where).toBe(`nodes[${i}].shape`);
    expect(e.message).toMatch(/8 ranks/);
  });

  it('rejects a matmul whose shapes disagree', () => {
    const raw = clone(FW);
    const i = pos('mm');
    raw.nodes[i].shape = [1024, 999];
    expect(importError(raw).message).toMatch(/matmul shapes do not agree/);
  });

  it('rejects an unknown arg reference', () => {
    const raw = clone(FW);
    const i = pos('mm');
    raw.nodes[i].args = ['view', 'ghost'];
    const e = importError(raw);
    expect(e.where).toBe(`nodes[${i}].args`);
    expect(e.message).toContain("'ghost'");
  });

  it('rejects a wait on a non-collective', () => {
    const raw = clone(FW);
    const i = pos('wait_tensor');
    raw.nodes[i].args = ['_to_copy'];
    raw.nodes[i].shape = [64, 256];
    const e = importError(raw);
    expect(e.where).toBe(`nodes[${i}].args`);
    expect(e.message).toMatch(/non-collective/);
  });

  it('rejects a collective that is never waited on', () => {
    const raw = clone(FW);
    const i = pos('wait_tensor_37');
    raw.nodes[i] = { ...raw.nodes[i], target: 'aten.detach.default' };
    expect(importError(raw).message).toMatch(/without a wait/);
  });

  it('rejects a duplicated name', () => {
    const raw = clone(FW);
    const i = pos('mm_1');
    raw.nodes[i].name = 'mm';
    const e = importError(raw);
    expect(e.where).toBe(`nodes[${i}].name`);
    expect(e.message).toMatch(/duplicated/);
  });

  it('rejects positions that do not match i, unsupported collectives and two forward graphs', () => {
    const raw = clone(FW);
    raw.nodes[3].i = 4;
    expect(importError(raw).where).toBe('nodes[3].i');
    const ar = clone(FW);
    ar.nodes[pos('all_gather_into_tensor')].target = '_c10d_functional.broadcast.default';
    expect(importError(ar).message).toMatch(/not supported/);
    expect(importError([FW, FW]).where).toBe('graph');
    expect(importError([]).where).toBe('dumps');
    expect(importError('{nope').where).toBe('json');
  });
});

describe('importFxGraph on hostile input (issue 12)', () => {
  it('rejects a placeholder whose shape disagrees with the cast that reads it, naming node and field', () => {
    const raw = clone(FW);
    const p = raw.nodes.find((n) => n.name === 'primals_2')!;
    p.shape = [64 * 20, 256]; // a 20× shard: believed, it inflated the peak silently
    const e = importError(raw);
    expect(e.where).toMatch(/^nodes\[\d+\]\.shape$/);
    expect(e.message).toMatch(
      /'_to_copy': field 'shape' \[64,256\] differs from its input's \[1280,256\] \(a cast keeps the shape\)/,
    );
  });

  it('rejects a reshape whose element count differs from its input', () => {
    const raw = clone(FW);
    const v = raw.nodes.find((n) => /aten\.(view|_unsafe_view)\./.test(n.target) && n.shape)!;
    v.shape = [...v.shape!, 3];
    expect(importError(raw).message).toMatch(
      /has \d+ elements but its input \[.*\] has \d+ \('(view|_unsafe_view)' keeps the count\)/,
    );
  });

  it('rejects an empty graph and one without call_function nodes instead of timing zeros', () => {
    expect(importError({ ...clone(FW), nodes: [] }).message).toBe(
      "fx dump: field 'nodes' is empty; a graph needs at least one call_function node",
    );
    const only = { ...clone(FW), nodes: FW.nodes.filter((n) => n.op === 'placeholder').map((n, i) => ({ ...n, i })) };
    expect(importError(only).message).toMatch(/has no call_function node/);
  });

  it('names the node and field of a 100k-deep nested value, as text and as an object', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const text = JSON.stringify(clone(FW)).replace('"shape":[64,256]', `"shape":${deep}`);
    for (const input of [text, JSON.parse(text.replace(deep, `${'['.repeat(5000)}${']'.repeat(5000)}`))]) {
      const e = importError(input);
      expect(e.where).toMatch(/^nodes\[\d+\]\.shape$/);
      expect(e.message).toMatch(/field 'shape' \[0\] must be an integer in \[0, 2\^40\], got \[\[\[\[\[…\]\]\]\]\]/);
    }
  });
});
