// torch's pass log read back: collective and node names are user strings (an FX dump names them),
// so names that are also Object.prototype members must read like any other name.
import { describe, expect, it } from 'vitest';
import { compareWithTorch, parseTorchPassLog } from '../../../src/backends/autobucketing';
import type { PassStats } from '../../../src/backends/schedule_types';

const NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty'];

const log = [
  'Overlap scheduling: Aligning runtime estimations',
  ...NAMES.map((c) => `Overlapping collective ${c} with node mm: coll_domination=1, current_depth=0`),
  ...NAMES.map((c) => `cannot overlap ${c} with mm_2: too far`),
  'cannot bucket all_gather_into_tensor with __proto__: would create a cycle',
  'bucketed valueOf with all_gather_into_tensor using timeline position 3',
  'Overlap scheduling results: exposed=1, __proto__=2, constructor=3, total_exposed_ms=0.5',
].join('\n');

const stats = (overlapping: Record<string, string[]>): PassStats => ({
  phase: 'forward',
  collectives: ['all_gather_into_tensor', ...NAMES],
  collectivesBefore: 5,
  collectivesAfter: 5,
  potentialExposedMs: 1,
  scheduledExposedMs: 0.5,
  originalPeakBytes: 0,
  allowedPeakBytes: 0,
  peakBytes: 0,
  overlapping,
  buckets: [],
  estimates: { fromGraph: 0, total: 0 },
});

describe('torch pass log with prototype names as collectives', () => {
  it('parses every line into its own entry', () => {
    const [g] = parseTorchPassLog(log);
    for (const c of NAMES) {
      expect(Object.hasOwn(g.overlapping, c), c).toBe(true);
      expect(g.overlapping[c]).toEqual(['mm']);
      expect(g.cannotOverlap[c]).toEqual({ node: 'mm_2', why: 'too far' });
    }
    expect(Object.getOwnPropertyDescriptor(g.cannotBucket, '__proto__')?.value).toEqual({
      seed: 'all_gather_into_tensor',
      why: 'would create a cycle',
    });
    expect(g.buckets).toEqual([['all_gather_into_tensor', 'valueOf']]);
    expect(g.summary.total_exposed_ms).toBe(0.5);
    expect(Object.hasOwn(g.summary, '__proto__')).toBe(true);
  });

  it('compares with fsdp-sim without mistaking a prototype member for a decision', () => {
    const [g] = parseTorchPassLog(log);
    const same = compareWithTorch(stats(Object.fromEntries(NAMES.map((c) => [c, ['mm']]))), g, []);
    expect(same.prefetchAgreement).toBe(1);
    const none = compareWithTorch(stats({}), g, []);
    expect(none.prefetchAgreement).toBe(0);
    const missed = none.disagreements.filter((d) => d.what === 'prefetch').map((d) => d.collective);
    expect(missed.sort()).toEqual([...NAMES].sort());
    const c = none.disagreements.find((d) => d.collective === 'constructor')!;
    expect(c.torch).toEqual({ kind: 'prefetched', behind: 'mm' });
    expect(c.fsdpSim).toEqual({ kind: 'reason', reason: undefined });
  });
});
