// aot_eager on hand-made graphs: program order, every wait right after its collective.
import { describe, expect, it } from 'vitest';
import { runAotEager } from '../../../src/backends';
import { ConfigError } from '../../../src/errors';
import { expectValidSchedule, handGraph, rooflineCost } from './helpers';

describe('runAotEager', () => {
  const g = handGraph({ layers: 3, paramsPerLayer: 2, seed: 3, elementwise: true });
  const cost = rooflineCost();

  it('places every wait immediately after its collective', () => {
    const s = runAotEager(g, cost);
    expectValidSchedule(g, s);
    s.graph.nodes.forEach((n, i) => {
      if (n.kind === 'all_gather' || n.kind === 'reduce_scatter') {
        expect(s.graph.nodes[i + 1].kind).toBe('wait');
        expect(s.graph.nodes[i + 1].waitOf).toBe(n.name);
      }
    });
  });

  it('keeps every non-wait node in program order', () => {
    const s = runAotEager(g, cost);
    const strip = (names: string[]) => names.filter((x) => !x.endsWith('wait'));
    expect(strip(s.graph.nodes.map((n) => n.name))).toEqual(strip(g.nodes.map((n) => n.name)));
  });

  it('moves waits up when the program put them later', () => {
    // a reduce-scatter wait the program placed just before the optimizer (a valid order)
    const late = handGraph({ layers: 2, paramsPerLayer: 2, seed: 5 });
    const nodes = [...late.nodes];
    const w = nodes.findIndex(
      (n) => n.kind === 'wait' && n.phase === 'backward' && n.waitOf!.endsWith('reduce_scatter'),
    );
    const [wait] = nodes.splice(w, 1);
    nodes.splice(
      nodes.findIndex((n) => n.phase === 'optimizer'),
      0,
      wait,
    );
    const moved = { ...late, nodes: nodes.map((n, i) => ({ ...n, id: i })) };
    const s = runAotEager(moved, cost);
    const pos = expectValidSchedule(moved, s);
    expect(pos.get(wait.name)).toBe(pos.get(wait.waitOf!)! + 1);
    expect(moved.nodes.findIndex((n) => n.name === wait.name)).toBeGreaterThan(w + 1);
  });

  it('gives a program_order reason for every collective and no buckets', () => {
    const s = runAotEager(g, cost);
    expect(s.buckets).toEqual([]);
    const colls = g.nodes.filter((n) => n.collective).map((n) => n.name);
    expect(s.reasons.map((r) => r.node).sort()).toEqual(colls.sort());
    expect(new Set(s.reasons.map((r) => r.code))).toEqual(new Set(['program_order']));
  });

  it('rejects any option: aot_eager has no knobs', () => {
    expect(() => runAotEager(g, cost, { foo: 1 } as never)).toThrow(ConfigError);
    expect(() => runAotEager(g, cost, { foo: 1 } as never)).toThrow(/aot_eager\.foo/);
  });
});
