// Bench helpers: a memcpy baseline and a timed collective across real worker_threads.

import { describe, expect, it } from 'vitest';
import { benchCollective, memcpyBaseline } from '../../../src/runtime/comm/node';

describe('memcpyBaseline', () => {
  it('times a copy of the requested bytes and reports bandwidth from the median', () => {
    const b = memcpyBaseline(1 << 20, 5);
    expect(b.bytes).toBe(1 << 20);
    expect(b.timesMs).toHaveLength(5);
    expect(b.medianMs).toBeGreaterThan(0);
    expect(b.gbPerS).toBeCloseTo(b.bytes / (b.medianMs * 1e6), 6);
  });
});

describe('benchCollective', () => {
  for (const kind of ['all_gather', 'reduce_scatter'] as const) {
    it(`times ${kind} of B bytes per shard on 2 workers with bus bandwidth (n−1)·B/t`, async () => {
      const r = await benchCollective({
        kind,
        shardBytes: 64 * 1024,
        worldSize: 2,
        algorithm: 'ring',
        iters: 4,
        warmup: 1,
      });
      expect(r).toMatchObject({ kind, worldSize: 2, shardBytes: 64 * 1024, algorithm: 'ring' });
      expect(r.timesMs).toHaveLength(4);
      expect(r.minMs).toBeLessThanOrEqual(r.medianMs);
      expect(r.busGbPerS).toBeCloseTo((1 * 64 * 1024) / (r.medianMs * 1e6), 6);
    });
  }
});
