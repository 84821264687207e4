// The port of torch's inductor pass simple_overlap (src/backends/simple_overlap.ts) against torch's own
// pass on small random graphs compiled by inductor (test/fixtures/torch_simple_overlap, made by
// tools/torch_simple_overlap/gen_simple_overlap.py): the same starting peak, the same order after; and
// the knob simple_overlap, which runs the port on aot_eager_autobucketing's schedule.
import { describe, expect, it } from 'vitest';
import { gzJsonReader } from '../../helpers/torch_fixtures';
import { AUTOBUCKETING_PROFILES, runAutobucketing, type Schedule } from '../../../src/backends';
import { type OverlapBuffer, type OverlapNode, simpleOverlap } from '../../../src/backends/simple_overlap';
import { expectValidSchedule, handGraph, rooflineCost } from './helpers';

interface Case {
  readonly nodes: OverlapNode[];
  readonly buffers: OverlapBuffer[];
  readonly peakBytes: number;
  readonly order: string[];
}
const read = gzJsonReader(new URL('../../fixtures/torch_simple_overlap/', import.meta.url));
const FIXTURE = read('cases.json.gz') as { torch: string; cases: Record<string, Case> };
const SEEDS = Object.keys(FIXTURE.cases);
const names = (c: Case): string[] => c.nodes.map((n) => n.name);

describe("simple_overlap against torch's pass", () => {
  it('torch 2.15.0 made them; the pass moved nodes in several', () => {
    expect(FIXTURE.torch.startsWith('2.15.0+')).toBe(true);
    const moved = SEEDS.filter((s) => FIXTURE.cases[s].order.join() !== names(FIXTURE.cases[s]).join());
    expect(moved.length).toBeGreaterThanOrEqual(5);
  });

  it('the memory bound decides swaps here: with every buffer free of bytes the port moves more', () => {
    const free = (c: Case): OverlapBuffer[] => c.buffers.map((b) => ({ ...b, sizeAlloc: 0, sizeFree: 0 }));
    const differs = SEEDS.filter(
      (s) =>
        simpleOverlap(FIXTURE.cases[s].nodes, free(FIXTURE.cases[s])).order.join() !== FIXTURE.cases[s].order.join(),
    );
    expect(differs.length).toBeGreaterThan(0);
  });

  it.each(SEEDS)("seed %s: torch's starting peak and its order", (seed) => {
    const c = FIXTURE.cases[seed];
    const r = simpleOverlap(c.nodes, c.buffers);
    expect(r.peakBytes).toBe(c.peakBytes);
    expect(r.order).toEqual(c.order);
  });
});

describe('simple_overlap invariants', () => {
  const node = (name: string, kind: OverlapNode['kind'], deps: string[] = []): OverlapNode => ({
    name,
    kind,
    outputs: [`${name}.out`],
    deps,
  });
  const buf = (name: string, bytes: number, users: string[]): OverlapBuffer => ({
    name: `${name}.out`,
    producer: name,
    sizeAlloc: bytes,
    sizeFree: bytes,
    users,
    graphOutput: false,
  });

  it('a collective rises to its producer, its wait sinks to its reader; neither passes its own kind', () => {
    const nodes = [
      node('x', 'other'),
      node('a', 'other'),
      node('c1', 'collective', ['x.out']),
      node('w1', 'wait', ['c1.out']),
      node('b', 'other', ['a.out']),
      node('use', 'other', ['w1.out', 'b.out']),
    ];
    const buffers = [
      buf('x', 1, ['c1']),
      buf('a', 1, ['b']),
      buf('c1', 1, ['w1']),
      buf('w1', 1, ['use']),
      buf('b', 1, ['use']),
      buf('use', 1, []),
    ];
    const r = simpleOverlap(nodes, buffers);
    expect(r.order).toEqual(['x', 'c1', 'a', 'b', 'w1', 'use']);
    expect([r.movedCollectives, r.movedWaits]).toEqual([1, 1]);
  });

  it('names the field of a buffer that points at an unknown node', () => {
    const nodes = [node('x', 'other')];
    expect(() => simpleOverlap(nodes, [buf('x', 1, ['y'])])).toThrow("buffer users names unknown node 'y'");
    expect(() => simpleOverlap(nodes, [buf('z', 1, [])])).toThrow("buffer producer names unknown node 'z'");
  });

  it('refuses a swap that would lift the peak', () => {
    // moving c above `big` keeps its 100-byte output live while big's 1000 bytes are: over the peak
    const nodes = [node('x', 'other'), node('big', 'other'), node('c', 'collective', ['x.out'])];
    nodes.push(node('w', 'wait', ['c.out']));
    const buffers = [buf('x', 1, ['c']), buf('big', 1000, []), buf('c', 100, ['w']), buf('w', 1, [])];
    expect(simpleOverlap(nodes, buffers).order).toEqual(['x', 'big', 'c', 'w']);
    const small = buffers.map((b) => (b.name === 'c.out' ? { ...b, sizeAlloc: 0, sizeFree: 0 } : b));
    expect(simpleOverlap(nodes, small).order).toEqual(['x', 'c', 'big', 'w']);
  });
});

describe('simple_overlap knob on aot_eager_autobucketing', () => {
  const g = handGraph({ layers: 4, paramsPerLayer: 3, seed: 7, elementwise: true });
  const cost = rooflineCost();
  const base = runAutobucketing(g, cost, { ...AUTOBUCKETING_PROFILES['torch-2.11'], max_compute_pre_fetch: 0 });
  const on = runAutobucketing(g, cost, {
    ...AUTOBUCKETING_PROFILES['torch-2.11'],
    max_compute_pre_fetch: 0,
    simple_overlap: true,
  });
  const kindOrder = (s: Schedule, kinds: string[]) =>
    s.graph.nodes.filter((n) => kinds.includes(n.kind)).map((n) => n.name);
  const COLLS = ['all_gather', 'reduce_scatter', 'all_reduce'];

  it('is off in every profile: torch runs it in inductor only', () => {
    for (const p of Object.values(AUTOBUCKETING_PROFILES)) expect(p.simple_overlap).toBe(false);
  });

  it('keeps a valid schedule, the collectives and the waits each in their order, and the buckets', () => {
    expectValidSchedule(g, on);
    expect(kindOrder(on, COLLS)).toEqual(kindOrder(base, COLLS));
    expect(kindOrder(on, ['wait'])).toEqual(kindOrder(base, ['wait']));
    expect(on.buckets).toEqual(base.buckets);
  });

  it('moves collectives up where the schedule left room', () => {
    const at = (s: Schedule) => new Map(s.graph.nodes.map((n) => [n.name, n.id]));
    const [b, o] = [at(base), at(on)];
    const starts = kindOrder(base, COLLS);
    expect(starts.some((n) => o.get(n)! < b.get(n)!)).toBe(true);
  });
});
