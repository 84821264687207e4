// The sentence of a simulated hang (src/words/ mismatchText) and the sweep's rows as the CLI's
// JSON gives them: a hang as `error`, its sentence, after the figures.
import { describe, expect, it } from 'vitest';
import type { SweepRow } from '../../../src/pipeline';
import type { CollectiveMismatch } from '../../../src/sim';
import { mismatchOpText, mismatchText, wordedSweepRow } from '../../../src/words';

const m: CollectiveMismatch = {
  seq: 3,
  ranks: [0, 7],
  ops: ['all_gather 1024B bf16 [a]', 'reduce_scatter 2048B bf16 [b]'],
  timeUs: 12,
};

describe('mismatchText', () => {
  it('says what diverged and the way out, with the CLI flags', () => {
    expect(mismatchText(m)).toBe(
      'collective mismatch at collective #3: rank 0 issued all_gather 1.0\u00a0KiB bf16 [a] but rank 7 issued ' +
        'reduce_scatter 2.0\u00a0KiB bf16 [b]; on real GPUs this step hangs. Ranks planned from their own timings: ' +
        'turn alignment on (--alignment on) or set --jitter-pct 0',
    );
  });

  it("writes a collective's size in the one bytes text, not raw bytes", () => {
    expect(mismatchOpText('all_gather 234881024B bf16 [w1.all_gather, w3.all_gather]')).toBe(
      'all_gather 224.00\u00a0MiB bf16 [w1.all_gather, w3.all_gather]',
    );
    expect(mismatchOpText('nothing (rank 3 finished)')).toBe('nothing (rank 3 finished)');
  });

  it('words a hung sweep row as its error, last, and leaves a good one as it is', () => {
    const row = {
      point: 0,
      values: { seed: 1 },
      backend: 'aot_eager',
      stepTimeMs: 1,
      exposedCommMs: 0,
      overlapPct: 0,
      peakMemoryBytes: 0,
      peakReservedBytes: 0,
      allGathers: 1,
      reduceScatters: 1,
      fitsHbm: true,
    } satisfies SweepRow;
    expect(wordedSweepRow(row)).toEqual(row);
    const hung = wordedSweepRow({ ...row, hang: m });
    expect(Object.keys(hung).at(-1)).toBe('error');
    expect(hung).toEqual({ ...row, error: mismatchText(m) });
  });
});
