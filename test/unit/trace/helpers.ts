// Test helper: a synthetic multi-rank step (streams never self-overlap),
// standing in for simulator output in trace-layer tests.
import type { MemoryCurve, TraceEvent } from '../../../src/trace/event';
import { rng } from '../../helpers/rng';

export function syntheticStep(
  seed: number,
  worldSize = 2,
): { events: TraceEvent[]; memory: MemoryCurve[]; worldSize: number } {
  const r = rng(seed);
  const events: TraceEvent[] = [];
  const memory: MemoryCurve[] = [];
  for (let rank = 0; rank < worldSize; rank++) {
    let tc = r() * 3;
    let tm = 0;
    let bucket = 0;
    for (let i = 0; i < 20; i++) {
      const dur = 1 + r() * 30.123456;
      if (r() < 0.35) {
        const kind = r() < 0.5 ? 'all_gather' : 'reduce_scatter';
        tm = Math.max(tm, tc - r() * 10);
        const d = 2 + r() * 40.4321;
        events.push({
          rank,
          stream: 'comm:dp',
          name: `${kind}_${i}`,
          kind,
          start: tm,
          dur: d,
          bucketId: bucket++,
          bytes: Math.floor(r() * 1e8),
          params: [`layers.${i}.w`],
        });
        tm += d;
        if (r() < 0.5 && tm > tc) {
          events.push({ rank, stream: 'compute', name: `wait_${i}`, kind: 'wait', start: tc, dur: tm - tc });
          tc = tm;
        }
      }
      events.push({ rank, stream: 'compute', name: `mm_${i}`, kind: 'compute', start: tc, dur, op: 'matmul' });
      tc += dur;
    }
    const t = [0, 10, 20.5, 31];
    const bytes = t.map((_, i) => (i + 1) * 1e9 + rank * 7);
    memory.push({ rank, t, bytes, peakBytes: Math.max(...bytes) });
  }
  return { events, memory, worldSize };
}
