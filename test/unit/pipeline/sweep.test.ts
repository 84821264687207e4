// Sweeps: axis parsing (lists, a:b:step ranges, errors naming the field and what is allowed), the
// cross product's order and configs, and rows equal to independent pipeline runs of each point.
import { describe, expect, it } from 'vitest';
import { defaultConfig, type SimConfig } from '../../../src/config';
import { ConfigError } from '../../../src/errors';
import { runPipeline } from '../../../src/pipeline';
import { csvCell } from '../../../src/pipeline/csv';
import { MAX_SWEEP_POINTS, parseVary, runSweep, sweepCsv, sweepPoints } from '../../../src/pipeline/sweep';
import { mismatchText } from '../../../src/words';

const err = (f: () => unknown): ConfigError => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
};

describe('parseVary', () => {
  it('reads a list and a range with its end included', () => {
    expect(parseVary('ranks=8,16, 64')).toEqual({
      path: 'ranks',
      values: ['8', '16', '64'],
    });
    expect(parseVary('autobucketing.max_in_flight_gb=0.5:2:0.5').values).toEqual(['0.5', '1', '1.5', '2']);
    const tenths = parseVary('jitterPct=0:1:0.1').values;
    expect(tenths).toHaveLength(11);
    expect(tenths[3]).toBe('0.3'); // not 0.30000000000000004
    expect(tenths[10]).toBe('1');
    expect(parseVary('ranks=2:7:2').values).toEqual(['2', '4', '6']);
  });

  it('names the valid fields for an unknown one', () => {
    const e = err(() => parseVary('autobucketing.max_in_flight=1'));
    expect(e.message).toMatch(/^--vary field must be one of \[model, ranks, .*autobucketing\.max_in_flight_gb.*\]/);
    expect(e.message.endsWith('], got "autobucketing.max_in_flight"')).toBe(true);
  });

  it('rejects malformed specs and ranges with the reason', () => {
    expect(err(() => parseVary('ranks')).message).toMatch(/--vary must be PATH=V1,V2/);
    expect(err(() => parseVary('ranks=')).message).toMatch(/--vary must be PATH=V1,V2/);
    expect(err(() => parseVary('ranks=1,,2')).message).toMatch(/empty value/);
    expect(err(() => parseVary('ranks=1:4')).message).toMatch(/a:b:step with three numbers, got '1:4'/);
    expect(err(() => parseVary('ranks=1:4:0')).message).toMatch(/step must be > 0/);
    expect(err(() => parseVary('ranks=4:1:1')).message).toMatch(/needs a ≤ b/);
    expect(err(() => parseVary('hardware=1:2:1')).message).toMatch(
      /ranges a:b:step apply to numeric fields; hardware is one of \[h100/,
    );
    expect(err(() => parseVary(`seed=0:${MAX_SWEEP_POINTS}:1`)).message).toMatch(/more than 10000/);
  });
});

describe('sweepPoints', () => {
  it('is the cross product, first axis slowest, each config carrying its values', () => {
    const pts = sweepPoints(defaultConfig(), [
      parseVary('ranks=2,4'),
      parseVary('autobucketing.max_in_flight_gb=1,2,3'),
    ]);
    expect(pts.map((p) => [p.config.ranks, p.config.autobucketing.max_in_flight_gb])).toEqual([
      [2, 1],
      [2, 2],
      [2, 3],
      [4, 1],
      [4, 2],
      [4, 3],
    ]);
    expect(pts.map((p) => p.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(pts[4].values).toEqual({
      ranks: 4,
      'autobucketing.max_in_flight_gb': 2,
    });
    // fields not varied keep the base's values
    const base: SimConfig = { ...defaultConfig(), model: 'small', seed: 7 };
    expect(sweepPoints(base, [parseVary('ranks=8')])[0].config).toEqual({
      ...base,
      ranks: 8,
    });
  });

  it('reports a bad value by field, value and allowed set before running anything', () => {
    expect(err(() => sweepPoints(defaultConfig(), [parseVary('ranks=2,x')])).message).toBe(
      'ranks must be an integer in [1, 1024], got "x"',
    );
    expect(err(() => sweepPoints(defaultConfig(), [parseVary('alignment=true,maybe')])).field).toBe('alignment');
    // a value that breaks a cross-field rule (straggler rank must be below ranks)
    expect(err(() => sweepPoints(defaultConfig(), [parseVary('straggler.rank=1,9')])).field).toBe('straggler.rank');
    expect(err(() => sweepPoints(defaultConfig(), [parseVary('ranks=2'), parseVary('ranks=4')])).message).toMatch(
      /varied twice/,
    );
  });
});

describe('runSweep', () => {
  it('gives each point and backend the figures of an independent run of that config', () => {
    const axes = [parseVary('ranks=2,4'), parseVary('autobucketing.max_in_flight_gb=0,5')];
    const backends = ['aot_eager', 'aot_eager_autobucketing'] as const;
    const rows = runSweep(defaultConfig(), axes, backends);
    expect(rows).toHaveLength(4 * 2);
    for (const p of sweepPoints(defaultConfig(), axes)) {
      for (const backend of backends) {
        const row = rows.find((r) => r.point === p.index && r.backend === backend)!;
        const ref = runPipeline(p.config, backend).metrics;
        expect(row.stepTimeMs).toBeCloseTo(ref.stepTimeUs / 1000, 9);
        expect(row.exposedCommMs).toBeCloseTo(ref.exposedCommUs / 1000, 9);
        expect(row.peakMemoryBytes).toBe(ref.peakMemoryBytes);
        expect([row.allGathers, row.reduceScatters]).toEqual([
          ref.collectives.all_gather,
          ref.collectives.reduce_scatter,
        ]);
        expect(row.fitsHbm).toBe(true);
      }
    }
    // the knob moves autobucketing (0 GB in flight forbids prefetch) and leaves aot_eager alone
    const ab = rows.filter((r) => r.backend === 'aot_eager_autobucketing' && r.values.ranks === 4);
    expect(ab[0].overlapPct).toBe(0);
    expect(ab[1].overlapPct).toBeGreaterThan(10);
  });

  it('exports CSV with one column per axis, quoting cells that need it', () => {
    const axes = [parseVary('ranks=2,4')];
    const csv = sweepCsv(axes, runSweep(defaultConfig(), axes, ['aot_eager']), mismatchText);
    const lines = csv.split('\n');
    expect(lines[0]).toBe(
      'ranks,backend,stepTimeMs,exposedCommMs,overlapPct,peakMemoryBytes,peakReservedBytes,' +
        'allGathers,reduceScatters,fitsHbm,error',
    );
    expect(lines).toHaveLength(3);
    expect(lines[2].split(',').slice(0, 2)).toEqual(['4', 'aot_eager']);
    expect([csvCell('a,b'), csvCell('say "hi"'), csvCell(Number.NaN), csvCell(null), csvCell(1.5)]).toEqual([
      '"a,b"',
      '"say ""hi"""',
      '',
      '',
      '1.5',
    ]);
  });
});
