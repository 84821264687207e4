// fsdp2_eager: FSDP2's per-module flat all-gather / reduce-scatter with one module of prefetch,
// and its allocations on the all-gather / reduce-scatter streams' own caching-allocator pools.
import { describe, expect, it } from 'vitest';
import {
  allocationStreamOf,
  fsdp2StreamOf,
  getBackend,
  runFsdp2Eager,
  runTransformerBlock,
  type Schedule,
} from '../../../src/backends';
import { defaultConfig, stepConfigOf } from '../../../src/config';
import { makeCostModel } from '../../../src/estimate';
import { buildStepGraph } from '../../../src/graph';
import { allocatorPeaks, scheduleAllocations } from '../../../src/sim/allocator';
import { expectValidSchedule, handGraph, rooflineCost } from './helpers';

describe('runFsdp2Eager', () => {
  const g = handGraph({ layers: 4, paramsPerLayer: 3, seed: 9 });
  const cost = rooflineCost();

  it('is registered and makes one flat all-gather per module and phase and one reduce-scatter per module', () => {
    expect(getBackend('fsdp2_eager').name).toBe('fsdp2_eager');
    const s = runFsdp2Eager(g, cost);
    expectValidSchedule(g, s);
    expect(s.backend).toBe('fsdp2_eager');
    expect(s.buckets.filter((b) => b.kind === 'all_gather')).toHaveLength(4 * 2);
    expect(s.buckets.filter((b) => b.kind === 'reduce_scatter')).toHaveLength(4);
    for (const b of s.buckets)
      expect(new Set(b.members.map((m) => g.nodes.find((n) => n.name === m)!.layer)).size).toBe(1);
  });

  it('issues the next module all-gather one module ahead, as transformer_block, and says so in FSDP2 terms', () => {
    const s = runFsdp2Eager(g, cost);
    const tb = runTransformerBlock(g, cost);
    const names = (x: Schedule) => x.graph.nodes.map((n) => n.name);
    expect(names(s)).toEqual(names(tb));
    const prefetch = s.reasons.filter((r) => r.code === 'block_prefetch');
    expect(prefetch.length).toBeGreaterThan(0);
    const forward = { kind: 'fsdp2_prefetch_all_gather', phase: 'forward', module: expect.stringMatching(/^layers\./) };
    expect(prefetch.some((r) => expect.objectContaining(forward).asymmetricMatch(r.detail))).toBe(true);
    expect(prefetch.some((r) => r.detail.kind === 'fsdp2_reduce_scatter')).toBe(true);
    const buckets = s.reasons.filter((r) => r.code === 'block_bucket');
    expect(buckets).toHaveLength(tb.reasons.filter((r) => r.code === 'block_bucket').length);
    expect(buckets.every((r) => r.detail.kind === 'fsdp2_bucket')).toBe(true);
  });

  it('allocates all-gather outputs and reduce-scatter buffers on their own streams', () => {
    const s = runFsdp2Eager(g, cost);
    const allocs = scheduleAllocations(s.graph, fsdp2StreamOf);
    const streams = new Set(allocs.map((a) => a.stream));
    expect([...streams].sort()).toEqual(['all_gather', 'all_gather_copy_in', 'compute', 'reduce_scatter']);
    expect(allocationStreamOf('fsdp2_eager')).toBe(fsdp2StreamOf);
    expect(allocationStreamOf('transformer_block')).toBeUndefined();
  });

  it('reserves more than SimpleFSDP on llama3-8b × 8 for the same allocated peak (pools per stream)', () => {
    const graph = buildStepGraph(stepConfigOf({ ...defaultConfig(), model: 'llama3-8b', ranks: 8 }));
    const c = makeCostModel({ hardware: 'h100-96gb', network: 'nvlink-ib' });
    const simple = allocatorPeaks(runTransformerBlock(graph, c).graph);
    const fsdp2 = allocatorPeaks(runFsdp2Eager(graph, c).graph, fsdp2StreamOf);
    expect(fsdp2.peakAllocatedBytes).toBe(simple.peakAllocatedBytes);
    expect(fsdp2.peakReservedBytes).toBeGreaterThan(simple.peakReservedBytes + 2 ** 30);
  });

  it('rejects options it does not have, naming the backend', () => {
    expect(() => runFsdp2Eager(g, cost, { prefetch: 2 } as never)).toThrow(/fsdp2_eager/);
  });
});
