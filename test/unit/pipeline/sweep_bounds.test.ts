// Issue 22: sweeps bounded in memory (H1: the graph cache evicts), in cost (H2: an estimate per
// point), ranges that cannot collapse to one value (S6), and every point's step config checked
// before any point runs (U4).
import { describe, expect, it } from 'vitest';
import { defaultConfig, type SimConfig } from '../../../src/config';
import { ConfigError } from '../../../src/errors';
import {
  MAX_SWEEP_GRAPHS,
  SECONDS_PER_LAYER_RUN,
  newSweepCache,
  parseVary,
  runSweep,
  runSweepPoint,
  sweepPoints,
  sweepSeconds,
} from '../../../src/pipeline/sweep';
import { runPoints, type SweepMessage } from '../../../src/store/sweep_runner';

const tiny = (over: Partial<SimConfig> = {}): SimConfig => ({ ...defaultConfig(), model: 'tiny', ...over });
const ranksOf = (key: string) => (JSON.parse(key) as { worldSize: number }).worldSize;

describe('the sweep cache keeps a bounded number of step graphs (H1)', () => {
  it('never holds more than its bound, evicting the least recently used', () => {
    const cache = newSweepCache(2);
    const pts = sweepPoints(tiny(), [parseVary('ranks=2,4,8,16')]);
    for (const p of pts) {
      runSweepPoint(p, ['aot_eager'], cache);
      expect(cache.graphs.size).toBeLessThanOrEqual(2);
    }
    expect([...cache.graphs.keys()].map(ranksOf)).toEqual([8, 16]);
    // a hit makes its graph the most recent: 8 survives the next miss, 16 does not
    runSweepPoint(sweepPoints(tiny({ ranks: 8 }), [parseVary('seed=5')])[0], ['aot_eager'], cache);
    runSweepPoint(sweepPoints(tiny({ ranks: 2 }), [parseVary('seed=5')])[0], ['aot_eager'], cache);
    expect([...cache.graphs.keys()].map(ranksOf)).toEqual([8, 2]);
  });

  it('shares one graph among points of one step config, and gives the rows an unbounded cache gives', () => {
    const axes = [parseVary('ranks=2,4,8'), parseVary('autobucketing.max_in_flight_gb=0.5,1,2')];
    const cache = newSweepCache(1);
    const rows = sweepPoints(tiny(), axes).flatMap((p) => runSweepPoint(p, ['aot_eager_autobucketing'], cache));
    const unbounded = sweepPoints(tiny(), axes).flatMap((p) =>
      runSweepPoint(p, ['aot_eager_autobucketing'], newSweepCache(1000)),
    );
    expect(rows).toEqual(unbounded);
    expect(cache.graphs.size).toBe(1);
  });

  it('holds at most MAX_SWEEP_GRAPHS over a 20-point ranks sweep', () => {
    const cache = newSweepCache();
    for (const p of sweepPoints(tiny(), [parseVary('ranks=2:40:2')])) runSweepPoint(p, ['aot_eager'], cache);
    expect(cache.graphs.size).toBe(MAX_SWEEP_GRAPHS);
  });
});

describe("a sweep's cost is estimated per point (H2)", () => {
  it('grows with the layers of each point, and with the ranks when they differ', () => {
    const pts = (cfg: SimConfig, vary: string) => sweepPoints(cfg, [parseVary(vary)]);
    const tinyS = sweepSeconds(pts(tiny(), 'seed=1,2'), ['aot_eager']);
    expect(tinyS).toBeCloseTo(2 * 2 * SECONDS_PER_LAYER_RUN, 12); // tiny: 2 layers, 2 points
    const big = sweepSeconds(pts({ ...defaultConfig(), model: 'llama3-405b' }, 'seed=1,2'), ['aot_eager']);
    expect(big / tinyS).toBeCloseTo(126 / 2, 9);
    const two = sweepSeconds(pts(tiny(), 'seed=1,2'), ['aot_eager', 'aot_eager_autobucketing']);
    expect(two).toBeCloseTo(2 * tinyS, 12);
    const jitter = sweepSeconds(pts(tiny({ ranks: 32, jitterPct: 5 }), 'seed=1,2'), ['aot_eager']);
    expect(jitter / tinyS).toBeCloseTo(1 + 32 / 16, 9);
    // the model may be a varied field: each point counts its own layers
    const mixed = sweepSeconds(pts(tiny(), 'model=tiny,llama3-8b'), ['aot_eager']);
    expect(mixed).toBeCloseTo((2 + 32) * SECONDS_PER_LAYER_RUN, 12);
  });
});

describe('ranges never collapse to repeated values (S6)', () => {
  it('refuses a range whose rounded values repeat, naming the field', () => {
    const e = (() => {
      try {
        parseVary('bandwidthGBps=100:100.0000000001:0.00000000001');
      } catch (x) {
        return x as ConfigError;
      }
      return undefined;
    })();
    expect(e).toBeInstanceOf(ConfigError);
    expect(e?.field).toBe('bandwidthGBps');
    expect(e?.message).toBe(
      "bandwidthGBps: the range '100:100.0000000001:0.00000000001' has 11 points but 1 distinct value(s) " +
        'at 12 significant digits; use a larger step',
    );
    expect(() => parseVary('ranks=8,16,8')).toThrow("ranks: '8' is listed twice in '8,16,8'");
    // a link's list: the cap is checked before anything per value, and a repeat is found in one pass
    const many = Array.from({ length: 100_000 }, (_, i) => i).join(',');
    expect(() => parseVary(`seed=${many}`)).toThrow('seed: the list has 100000 values, more than 10000');
    const late = `${Array.from({ length: 10_000 }, (_, i) => i)
      .join(',')
      .replace(/,9999$/, ',0')}`;
    const quoted = `'${late.slice(0, 60)}… (${late.length} characters)'`;
    expect(() => parseVary(`seed=${late}`)).toThrow(`seed: '0' is listed twice in ${quoted}`);
    const tenths = ['100', '100.1', '100.2', '100.3', '100.4', '100.5'];
    expect(parseVary('bandwidthGBps=100:100.5:0.1').values).toEqual(tenths);
  });
});

describe('every point is checked before any runs (U4)', () => {
  it("names the first point whose tp the model's heads refuse, and runs nothing", () => {
    const axes = [parseVary('seed=1:200:1'), parseVary('parallelism.tensor_parallel_degree=1,8')];
    expect(() => sweepPoints(tiny({ ranks: 8 }), axes)).toThrow(
      'point 1 (seed=1, parallelism.tensor_parallel_degree=8): ' +
        "mesh.tp (tensor_parallel_degree 8) must divide the model's nHeads (4)",
    );
    expect(() => runSweep(tiny({ ranks: 8 }), axes, ['aot_eager'])).toThrow(ConfigError);
    const ok = sweepPoints(tiny({ ranks: 8 }), [parseVary('parallelism.tensor_parallel_degree=1,2,4')]);
    expect(ok).toHaveLength(3);
  });

  it("the app's sweep runner reports the error before any row", async () => {
    const sent: SweepMessage[] = [];
    const axes = [parseVary('seed=1,2'), parseVary('parallelism.tensor_parallel_degree=1,8')];
    const req = { base: tiny({ ranks: 8 }), axes, backends: ['aot_eager'] as const };
    await runPoints(
      req,
      (m) => void sent.push(m),
      () => false,
      async () => {},
    );
    expect(sent.map((m) => m.type)).toEqual(['error']);
    const first = sent[0];
    expect(first.type === 'error' && first.error).toMatch(/^point 1 \(seed=1, parallelism\.tensor_parallel_degree=8/);
  });
});
