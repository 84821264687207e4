// The "does it fit in HBM" signal: hbmFit against the hardware presets' datasheet capacities, its
// wording (both numbers named), and the CLI compare table's fits column / warning with --ac.
import { describe, expect, it } from 'vitest';
import { describeHbmFit, hbmFit } from '../../../src/config';
import { formatTable, type CompareRow } from '../../../src/cli/cli_format';
import { cli } from '../../helpers/cli';

const GB = 1e9;
const GIB = 2 ** 30;

describe('hbmFit', () => {
  it('compares the peak with the HBM torch reports (H100: 79.18 GiB, 96 GB: 95.04, H200: 139.81, A100: 79.25)', () => {
    expect(hbmFit(79 * GIB, 'h100')).toMatchObject({ fits: true, hbmBytes: 79.18 * GIB });
    expect(hbmFit(80 * GIB, 'h100').fits).toBe(false);
    expect(hbmFit(80 * GIB, 'h100-96gb')).toMatchObject({ fits: true, hbmBytes: 95.0396 * GIB });
    expect(hbmFit(96 * GB, 'h200')).toMatchObject({ fits: true, hbmBytes: 139.81 * GIB });
    expect(hbmFit(80 * GIB, 'a100').fits).toBe(false);
    expect(hbmFit(80 * GB, 'a100').fits).toBe(true); // 74.5 GiB
    expect(hbmFit(NaN, 'h100').fits).toBe(true); // unknown peak: no claim
  });

  it('names both numbers', () => {
    expect(describeHbmFit(hbmFit(100 * 2 ** 30, 'h100'))).toBe('peak 100.00 GiB > h100 HBM 79.18 GiB (80 GB)');
    expect(describeHbmFit(hbmFit(2 ** 30, 'h200'))).toBe('peak 1.00 GiB ≤ h200 HBM 139.81 GiB (141 GB)');
  });
});

describe('formatTable with hardware', () => {
  const row = (backend: string, peakGiB: number): CompareRow => ({
    backend,
    stepTimeMs: 1,
    exposedCommMs: 0,
    overlapPct: 0,
    peakMemoryBytes: peakGiB * 2 ** 30,
    collectives: { all_gather: 1, reduce_scatter: 1 },
  });
  it('adds a fits column after #RS, and none without hardware', () => {
    const t = formatTable([row('a', 10), row('b', 100)], 'h100').split('\n');
    expect(t[0]).toMatch(/#RS\s+fits 79\.2 GiB HBM$/);
    expect(t[2]).toMatch(/\byes$/);
    expect(t[3]).toMatch(/\bNO$/);
    expect(formatTable([row('a', 10)])).not.toMatch(/fits/);
  });
});

describe('fsdp-sim compare --ac', () => {
  const run = cli;
  it('runs with AC full (more step time on tiny: the recompute), rejects an unknown mode naming the field', async () => {
    const none = await run(['compare', '--backends', 'aot_eager', '--ac', 'none']);
    const full = await run(['compare', '--backends', 'aot_eager', '--ac', 'full']);
    expect(none.code).toBe(0);
    expect(full.code).toBe(0);
    expect(full.out).toMatch(/activation checkpointing full/);
    const ms = (s: string) => Number(/aot_eager\s+([\d.]+)/.exec(s)![1]);
    expect(ms(full.out)).toBeGreaterThan(ms(none.out));
    const bad = await run(['compare', '--ac', 'sac']);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toMatch(/--ac must be one of \[none, selective, full, null\], got "sac"/);
  });
  it('warns when the peak exceeds the HBM of the hardware, naming both numbers', async () => {
    // llama3-8b on 2 ranks without AC: ~100 GiB peak > the A100's 80 GB
    const r = await run([
      'compare',
      '--model',
      'llama3-8b',
      '--ranks',
      '2',
      '--hardware',
      'a100',
      '--backends',
      'aot_eager',
      '--ac',
      'none',
    ]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/warning: aot_eager: peak reserved [\d.]+ GiB > a100 HBM 79\.25 GiB \(80 GB\): /);
    expect(r.out).toMatch(/GB\): the step does not fit \(try --ac full\)/);
  }, 60_000);
});
