// transformer_block on hand-made graphs: one bucket per block and phase, one-block-ahead
// prefetch, reduce-scatter waits one block later.
import { describe, expect, it } from 'vitest';
import { moduleOf, runAotEager, runTransformerBlock } from '../../../src/backends';
import { simulate } from '../../../src/sim';
import { computeMetrics } from '../../../src/trace';
import { expectValidSchedule, handGraph, rooflineCost } from './helpers';
import { graphNode } from '../../helpers/graph_node';

describe('runTransformerBlock', () => {
  const g = handGraph({ layers: 4, paramsPerLayer: 3, seed: 4 });
  const cost = rooflineCost();

  it('makes one all-gather bucket per block and phase and one reduce-scatter bucket per block', () => {
    const s = runTransformerBlock(g, cost);
    expectValidSchedule(g, s);
    const ag = s.buckets.filter((b) => b.kind === 'all_gather');
    const rs = s.buckets.filter((b) => b.kind === 'reduce_scatter');
    expect(ag).toHaveLength(4 * 2);
    expect(rs).toHaveLength(4);
    for (const b of s.buckets) {
      const layers = new Set(b.members.map((m) => g.nodes.find((n) => n.name === m)!.layer));
      expect(layers.size).toBe(1);
      expect(b.members).toHaveLength(3);
    }
  });

  it('issues the next block all-gather before the current block compute (one block ahead)', () => {
    const s = runTransformerBlock(g, cost);
    const pos = expectValidSchedule(g, s);
    const fwd = s.buckets.filter(
      (b) => b.kind === 'all_gather' && b.members[0].includes('.all_gather') && !b.members[0].includes('bwd'),
    );
    for (let k = 1; k < fwd.length; k++) {
      const prevLayerMm = `layers.${k - 1}.p0.weight.fwd.mm`;
      expect(pos.get(fwd[k].node)!).toBeLessThan(pos.get(prevLayerMm)!);
    }
  });

  it('waits on a block reduce-scatter only after the next block reduce-scatter is issued', () => {
    const s = runTransformerBlock(g, cost);
    const pos = expectValidSchedule(g, s);
    const rs = s.buckets.filter((b) => b.kind === 'reduce_scatter').sort((a, b) => pos.get(a.node)! - pos.get(b.node)!);
    for (let k = 0; k + 1 < rs.length; k++) {
      const wait = s.graph.nodes.find((n) => n.waitOf === rs[k].node)!;
      expect(pos.get(wait.name)!).toBeGreaterThan(pos.get(rs[k + 1].node)!);
    }
  });

  it('exposes less communication than aot_eager', () => {
    const ex = (s: ReturnType<typeof runAotEager>) => {
      const sim = simulate({ worldSize: 8, schedules: s, cost });
      return computeMetrics(sim.events).exposedCommUs;
    };
    expect(ex(runTransformerBlock(g, cost))).toBeLessThan(ex(runAotEager(g, cost)));
  });

  it('is deterministic', () => {
    expect(runTransformerBlock(g, cost)).toEqual(runTransformerBlock(g, cost));
  });
});

describe('moduleOf', () => {
  it('groups by block, with tok_embeddings and norm+output as their own modules', () => {
    const base = graphNode({});
    expect(moduleOf({ ...base, name: 'a', layer: 3 })).toBe('layers.3');
    expect(moduleOf({ ...base, name: 'tok_embeddings.weight.all_gather', params: ['tok_embeddings.weight'] })).toBe(
      'tok_embeddings',
    );
    expect(moduleOf({ ...base, name: 'norm.weight.all_gather', params: ['norm.weight'] })).toBe('norm+output');
    expect(moduleOf({ ...base, name: 'output.weight.all_gather', params: ['output.weight'] })).toBe('norm+output');
  });
});
