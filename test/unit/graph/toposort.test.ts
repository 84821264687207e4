// Dependencies with reasons, topological-order checks and Kahn ordering.
import { describe, expect, it } from 'vitest';
import { GraphError, buildStepGraph, kahnOrder, topoOrder } from '../../../src/graph';
import { dependencies, isTopologicalOrder } from '../../../src/graph/toposort';

const g = buildStepGraph({ model: 'tiny', worldSize: 4 });
const id = (name: string) => g.nodes.findIndex((n) => n.name === name);

describe('dependencies', () => {
  const deps = dependencies(g);

  it('links each wait to its collective as wait-after-collective', () => {
    for (const w of g.nodes.filter((n) => n.kind === 'wait')) {
      const e = deps.filter((d) => d.to === w.id);
      expect(e).toEqual([{ from: id(w.waitOf as string), to: w.id, why: 'wait-after-collective' }]);
    }
  });

  it('links a reader to the writer of each tensor it reads, naming the tensor', () => {
    const mm = id('layers.0.attention.wq');
    const e = deps.filter((d) => d.to === mm);
    expect(e).toEqual([
      { from: id('layers.0.attention_norm'), to: mm, why: 'read-after-write', tensor: 'layers.0.attention_norm' },
      {
        from: id('layers.0.attention.wq.weight.wait'),
        to: mm,
        why: 'read-after-write',
        tensor: 'layers.0.attention.wq.weight.full',
      },
    ]);
  });

  it('points every edge forward in program order', () => {
    expect(deps.every((d) => d.from < d.to)).toBe(true);
  });
});

describe('isTopologicalOrder', () => {
  const n = g.nodes.length;
  const identity = Array.from({ length: n }, (_, i) => i);

  it('accepts program order', () => {
    expect(isTopologicalOrder(g, identity)).toBe(true);
  });

  it('accepts a legal reorder: a backward re-gather issued early, at the start of the step', () => {
    const cast = id('layers.1.attention.wo.weight.bwd.cast');
    const ag = cast + 1;
    const order = [cast, ag, ...identity.filter((i) => i !== cast && i !== ag)];
    expect(isTopologicalOrder(g, order)).toBe(true);
  });

  it('rejects a wait moved before its collective, a non-permutation and a wrong length', () => {
    const w = id('norm.weight.wait');
    const order = [...identity];
    [order[w - 1], order[w]] = [order[w], order[w - 1]];
    expect(isTopologicalOrder(g, order)).toBe(false);
    expect(isTopologicalOrder(g, [...identity.slice(0, -1), 0])).toBe(false);
    expect(isTopologicalOrder(g, identity.slice(1))).toBe(false);
  });
});

describe('kahnOrder', () => {
  it('returns program order for the builder graph (smallest ready id first)', () => {
    expect(topoOrder(g)).toEqual(Array.from({ length: g.nodes.length }, (_, i) => i));
  });

  it('orders a small DAG with explicit tie-breaks', () => {
    expect(
      kahnOrder(4, [
        { from: 3, to: 0 },
        { from: 2, to: 1 },
      ]),
    ).toEqual([2, 1, 3, 0]);
  });

  it('throws a GraphError on a cycle', () => {
    expect(() =>
      kahnOrder(3, [
        { from: 0, to: 1 },
        { from: 1, to: 2 },
        { from: 2, to: 1 },
      ]),
    ).toThrow(GraphError);
    expect(() =>
      kahnOrder(3, [
        { from: 0, to: 1 },
        { from: 1, to: 0 },
      ]),
    ).toThrow(/cycle/);
  });
});
