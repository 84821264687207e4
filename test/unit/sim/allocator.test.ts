// The caching-allocator model: rounding, best-fit reuse, fragmentation from out-of-order frees,
// pools per stream, and the loss's hidden fp32 tensors; cross-checked against the live-bytes
// profile (allocated peak = static peak of the same order, up to rounding).
import { describe, expect, it } from 'vitest';
import { defaultConfig, stepConfigOf } from '../../../src/config';
import { runBackend } from '../../../src/backends';
import { makeCostModel } from '../../../src/estimate';
import { buildStepGraph } from '../../../src/graph';
import {
  allocatorPeaks,
  cachingAllocatorPeaks,
  roundSize,
  scheduleAllocations,
  type Allocation,
} from '../../../src/sim/allocator';
import { hiddenTensors } from '../../../src/sim/hidden_tensors';
import { scheduleMemoryProfile } from '../../../src/sim/memory';
import { rng } from '../../helpers/rng';
import { tinyGraph } from './fixtures';

const MiB = 2 ** 20;
const a = (alloc: number, free: number, mib: number, stream = 'compute'): Allocation => ({
  alloc,
  free,
  bytes: mib * MiB,
  stream,
});

describe('roundSize', () => {
  it('rounds up to 512 B blocks, 512 B at least', () => {
    expect(roundSize(1)).toBe(512);
    expect(roundSize(512)).toBe(512);
    expect(roundSize(513)).toBe(1024);
    expect(roundSize(0)).toBe(512);
  });
});

describe('cachingAllocatorPeaks', () => {
  it('reuses a freed block for a request that fits: reserved stays at the high-water mark', () => {
    // 10 MiB, freed, then 8 MiB: the cached block serves it (split), nothing new is mapped
    const p = cachingAllocatorPeaks([a(0, 0, 10), a(1, 1, 8)]);
    expect(p.peakAllocatedBytes).toBe(10 * MiB);
    expect(p.peakReservedBytes).toBe(10 * MiB);
  });

  it('fragments when a larger request finds only holes: reserved > allocated', () => {
    // A 10, B 10, C 10 live; A and C freed (two 10 MiB holes around B); D 20 fits in neither hole
    const p = cachingAllocatorPeaks([a(0, 1, 10), a(0, 5, 10), a(0, 1, 10), a(2, 5, 20)]);
    expect(p.peakAllocatedBytes).toBe(30 * MiB);
    // C's hole is the free tail: the segment grows it by 10 MiB to hold D (expandable segments)
    expect(p.peakReservedBytes).toBe(40 * MiB);
    // had B been freed first, A-B-C would merge and D would fit: no growth
    const merged = cachingAllocatorPeaks([a(0, 1, 10), a(0, 1, 10), a(0, 5, 10), a(2, 5, 20)]);
    expect(merged.peakReservedBytes).toBe(30 * MiB);
  });

  it('keeps one pool per stream: a block freed on one stream does not serve another', () => {
    const same = cachingAllocatorPeaks([a(0, 0, 100), a(1, 1, 100)]);
    const other = cachingAllocatorPeaks([a(0, 0, 100, 'all_gather'), a(1, 1, 100)]);
    expect(same.peakReservedBytes).toBe(100 * MiB);
    expect(other.peakReservedBytes).toBe(200 * MiB);
    expect(other.peakAllocatedBytes).toBe(100 * MiB);
  });

  it('maps 2 MiB pages and counts the persistent base once', () => {
    const p = cachingAllocatorPeaks([a(0, 0, 1.5)], 3 * MiB);
    expect(p.peakAllocatedBytes).toBe(4.5 * MiB);
    expect(p.peakReservedBytes).toBe(4 * MiB + 2 * MiB);
  });

  it('never reserves less than it allocates, on random allocation streams', () => {
    const r = rng(7);
    for (let trial = 0; trial < 20; trial++) {
      const allocs: Allocation[] = Array.from({ length: 60 }, () => {
        const s = Math.floor(r() * 40);
        return a(s, s + Math.floor(r() * 20), 0.001 + r() * 50, r() < 0.3 ? 'side' : 'compute');
      });
      const p = cachingAllocatorPeaks(allocs);
      expect(p.peakReservedBytes).toBeGreaterThanOrEqual(p.peakAllocatedBytes);
      // the allocated peak is the max over positions of the live rounded bytes
      let maxLive = 0;
      for (let t = 0; t < 60; t++) {
        const live = allocs.filter((x) => x.alloc <= t && x.free >= t).reduce((s, x) => s + roundSize(x.bytes), 0);
        maxLive = Math.max(maxLive, live);
      }
      expect(p.peakAllocatedBytes).toBe(maxLive);
    }
  });
});

describe('allocatorPeaks on step graphs', () => {
  it('gives the static live-bytes peak as the allocated peak of a graph without a loss, up to 512 B rounding', () => {
    const g = tinyGraph();
    const p = allocatorPeaks(g);
    const s = scheduleMemoryProfile(g).peakBytes;
    expect(p.peakAllocatedBytes).toBeGreaterThanOrEqual(s);
    expect(p.peakAllocatedBytes).toBeLessThanOrEqual(s + 512 * (Object.keys(g.tensors).length + 1));
  });

  it("adds torchtitan's fp32 loss tensors on llama3-8b: log-probabilities saved, two fp32 gradients at the loss backward", () => {
    const g = buildStepGraph(stepConfigOf({ ...defaultConfig(), model: 'llama3-8b', ranks: 8 }));
    const fp32Logits = 8192 * 128256 * 4; // bytes
    const hidden = hiddenTensors(g.nodes);
    expect(hidden.map((h) => h.bytes)).toEqual([fp32Logits, fp32Logits, fp32Logits, fp32Logits]);
    const ceBwd = g.nodes.findIndex((n) => n.op === 'cross_entropy_bwd');
    const liveAtBwd = hidden.filter((h) => h.alloc < ceBwd && h.free >= ceBwd - 0.15).length;
    expect(liveAtBwd).toBe(3); // log_softmax output, its gradient, the fp32 logits gradient
    const p = allocatorPeaks(g);
    const s = scheduleMemoryProfile(g).peakBytes;
    expect(p.peakAllocatedBytes - s).toBeGreaterThan(2 * fp32Logits);
    expect(p.peakAllocatedBytes - s).toBeLessThan(3 * fp32Logits + 64 * MiB);
  });

  it('allocates a bucket as one flat buffer: one allocation per bucket instead of one per member', () => {
    const cfg = { ...defaultConfig(), model: 'tiny' as const, ranks: 4 };
    const g = buildStepGraph(stepConfigOf(cfg));
    const cost = makeCostModel({ hardware: 'h100', network: 'nvlink-ib' });
    const plain = runBackend('aot_eager', g, cost);
    const bucketed = runBackend('transformer_block', g, cost);
    expect(bucketed.buckets.length).toBeGreaterThan(0);
    const saved = bucketed.buckets.reduce((s, b) => s + b.members.length - 1, 0);
    expect(scheduleAllocations(bucketed.graph).length).toBe(scheduleAllocations(plain.graph).length - saved);
    // the same bytes in all
    const total = (x: Allocation[]) => x.reduce((s, y) => s + y.bytes, 0);
    expect(total(scheduleAllocations(bucketed.graph))).toBe(total(scheduleAllocations(plain.graph)));
  });
});
