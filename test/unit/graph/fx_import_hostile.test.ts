// FX import on user strings that collide with JavaScript's object model (issue 22 U1), estimates
// that would push the simulated clock past 2^53 µs (S4) and a UTF-8 byte-order mark (U3).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAutobucketing } from '../../../src/backends';
import { AUTOBUCKETING_PROFILES } from '../../../src/backends/autobucketing';
import { makeCostModel } from '../../../src/estimate';
import { ImportError } from '../../../src/errors';
import { importFxGraph, type StepGraph } from '../../../src/graph';
import { readFxDump } from '../../../src/graph/fx_schema';
import { cli } from '../../helpers/cli';
import { fixtureUrl } from '../../helpers/fixtures';

interface RawNode {
  name: string;
  target: string;
  args: string[];
  dtype?: string;
  est_ms?: number;
  [k: string]: unknown;
}
interface Raw {
  world_size: number;
  nodes: RawNode[];
}

const FX = fixtureUrl('fx/');
const text = (f: string) => readFileSync(new URL(f, FX), 'utf8');
const FW = (): Raw => JSON.parse(text('tiny_4layer_fw.json'));
const BW = (): Raw => JSON.parse(text('tiny_4layer_bw.json'));

function importError(x: unknown): ImportError {
  const r = importFxGraph(x);
  if (r.ok) throw new Error('expected the import to fail');
  expect(r.error).toBeInstanceOf(ImportError);
  return r.error;
}

function imported(x: unknown): StepGraph {
  const r = importFxGraph(x);
  if (!r.ok) throw r.error;
  return r.value;
}

/** Renames node `from` to `to` in a dump, and every reference to it. */
function rename(raw: Raw, from: string, to: string): void {
  for (const n of raw.nodes) {
    if (n.name === from) n.name = to;
    n.args = n.args.map((a) => (a === from ? to : a));
  }
}

describe('prototype names as user strings (issue 22 U1)', () => {
  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty'])(
    "a dtype '%s' is refused as an unknown dtype, naming the field and the allowed values",
    (dtype) => {
      const raw = FW();
      const i = raw.nodes.findIndex((n) => n.dtype === 'bfloat16');
      raw.nodes[i].dtype = dtype;
      const e = importError(raw);
      expect(e.where).toBe(`nodes[${i}].dtype`);
      expect(e.message).toContain(`field 'dtype' must be one of [float32, `);
      expect(e.message).toContain(`got "${dtype}"`);
      expect(e.message).not.toMatch(/function|native code/);
    },
  );

  it.each(['constructor', '__proto__', 'toString', 'valueOf'])(
    "a node named '%s' imports like any other name, in the forward and in the joined backward",
    (name) => {
      const fw = FW();
      const bw = BW();
      const mm = fw.nodes.find((n) => n.target === 'aten.mm.default')?.name as string;
      rename(fw, mm, name);
      rename(bw, mm, name);
      const plain = imported([FW(), BW()]);
      const g = imported([fw, bw]);
      expect(g.nodes.length).toBe(plain.nodes.length);
      const node = g.nodes.find((n) => n.name === name);
      expect(node?.outputs).toEqual([name]);
      expect(Object.hasOwn(g.tensors, name)).toBe(true);
      expect(g.tensors[name].shape).toEqual(plain.tensors[mm].shape);
      // the backward's reader of the forward tensor still reads it
      expect(g.nodes.filter((n) => n.inputs.includes(name)).length).toBe(
        plain.nodes.filter((n) => n.inputs.includes(mm)).length,
      );
    },
  );
});

describe('prototype names through the pass', () => {
  it.each(['constructor', '__proto__'])("a collective named '%s' gets the decisions its own name got", (name) => {
    const cost = makeCostModel({ hardware: 'h100', network: 'nccl-analytical' });
    const opts = AUTOBUCKETING_PROFILES['torch-2.11'];
    const coll = 'all_gather_into_tensor_3';
    const pair = [FW(), BW()];
    for (const d of pair) rename(d, coll, name);
    const want = runAutobucketing(imported([FW(), BW()]), cost, opts).passStats ?? [];
    const got = runAutobucketing(imported(pair), cost, opts).passStats ?? [];
    expect(want[0].overlapping[coll]).toBeDefined();
    expect(Object.hasOwn(got[0].overlapping, name)).toBe(true);
    expect(got[0].overlapping[name]).toEqual(want[0].overlapping[coll]);
    const back = (bs: readonly (readonly string[])[]) => bs.map((b) => b.map((c) => (c === name ? coll : c)));
    expect(back(got[0].buckets)).toEqual(want[0].buckets);
  });
});

describe('estimates past the simulated clock (issue 22 S4)', () => {
  const computeNode = (raw: Raw) => raw.nodes.findIndex((n) => n.target === 'aten.mm.default');

  it.each([1e13, 1e15, 1e300])('refuses est_ms %s on one node, naming the node and the field', (ms) => {
    const raw = FW();
    const i = computeNode(raw);
    raw.nodes[i].est_ms = ms;
    const e = importError(raw);
    expect(e.where).toBe(`nodes[${i}].est_ms`);
    expect(e.message).toContain(`node ${i} '${raw.nodes[i].name}': field 'est_ms'`);
    expect(e.message).toMatch(/2\^53 µs/);
  });

  it('refuses estimates that only add up past 2^53 µs, at the node where the sum crosses it', () => {
    const fw = FW();
    const bw = BW();
    const half = 2 ** 53 / 1000 / 2; // ms: each alone fits, the two together do not
    const i = computeNode(fw);
    const k = computeNode(bw);
    fw.nodes[i].est_ms = half * 0.9;
    bw.nodes[k].est_ms = half * 1.2;
    expect(imported(fw).nodes.some((n) => n.estMs === half * 0.9)).toBe(true);
    const e = importError([fw, bw]);
    expect(e.where).toBe(`dumps[1].nodes[${k}].est_ms`);
    expect(e.message).toMatch(/add up to more than 2\^53 µs/);
  });

  it('keeps a large but representable estimate', () => {
    const raw = FW();
    const i = computeNode(raw);
    raw.nodes[i].est_ms = 1e9; // about 11.6 days
    expect(imported(raw).nodes.find((n) => n.name === raw.nodes[i].name)?.estMs).toBe(1e9);
  });
});

describe('a UTF-8 byte-order mark (issue 22 U3)', () => {
  it('readFxDump accepts JSON text that starts with a BOM', () => {
    const d = readFxDump(`\uFEFF${text('tiny_4layer_fw.json')}`);
    expect(d.graph).toBe('forward');
  });

  it('fsdp-sim pass reads a BOM file as analyze does', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fsdp-sim-bom-'));
    const files = ['fw', 'bw'].map((p) => {
      const f = join(dir, `${p}.json`);
      writeFileSync(f, `\uFEFF${text(`tiny_4layer_${p}.json`)}`);
      return f;
    });
    const r = await cli(['pass', '--fx-graph', ...files, '--json']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).collectivesBefore).toBeGreaterThan(0);
  });
});
