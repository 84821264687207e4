// Calibration from synthetic Kineto traces made with known α, β and op-class scales (from the
// simulator's own step of the config, with ±0.5 % deterministic noise): the fit recovers them
// within 2 %, whether a kernel carries its sizes or its record_param_comms launch does.
import { describe, expect, it } from 'vitest';
import { ImportError } from '../../../src/errors';
import { buildGraph, runPipeline } from '../../../src/pipeline';
import { calibrate, fitCollectives, modelUs, opClassOfOp } from '../../../src/pipeline/calibrate';
import { opClassOfKernel, traceSamples } from '../../../src/pipeline/calibrate_kineto';
import { ALPHA_US, BETA, CFG, KERNEL, SCALES, STEPS, kinetoFiles as files } from '../../helpers/kineto_synth';

describe('calibrate', () => {
  for (const onKernel of [true, false]) {
    const where = onKernel ? 'kernel' : 'launching record_param_comms';
    it(`recovers α, β and the op-class scales within 2 % (sizes on the ${where})`, () => {
      const t = traceSamples(files(onKernel));
      if (!t.ok) throw t.error;
      const colls = buildGraph(CFG).nodes.filter((n) => n.collective).length;
      expect(t.value.collectives).toHaveLength(2 * STEPS * colls);
      expect([t.value.steps, t.value.ranks, t.value.skipped]).toEqual([STEPS, 2, 2]);
      const c = calibrate(t.value, CFG);
      expect(c.groups).toHaveLength(1);
      const g = c.groups[0];
      expect([g.group, g.groupSize]).toEqual(['0', 4]);
      expect(Math.abs(g.alphaUs / ALPHA_US - 1)).toBeLessThan(0.02);
      expect(Math.abs(g.betaBytesPerS / BETA - 1)).toBeLessThan(0.02);
      expect(g.maxRelErr).toBeLessThan(0.02); // the model fits every collective within the noise
      for (const s of c.scales) expect(Math.abs(s.scale / SCALES[s.cls] - 1)).toBeLessThan(0.02);
    });
  }

  it('gives flags under which the simulator times every collective as the fitted ring', () => {
    const t = traceSamples(files(true));
    if (!t.ok) throw t.error;
    const g = calibrate(t.value, CFG).groups[0];
    const cfg = {
      ...CFG,
      network: 'pcie-ethernet' as const,
      latencyUs: g.alphaUs,
      bandwidthGBps: g.betaBytesPerS / 1e9,
    };
    const run = runPipeline(cfg, 'aot_eager', { emitRanks: [0] });
    const comm = run.sim.events.filter((e) => e.kind === 'all_gather' || e.kind === 'reduce_scatter');
    expect(comm.length).toBeGreaterThan(0);
    for (const e of comm) {
      const want = modelUs(
        { kind: e.kind as 'all_gather', groupSize: CFG.ranks, bytes: e.bytes! },
        g.alphaUs,
        g.betaBytesPerS,
      );
      expect(e.dur).toBeCloseTo(want, 6);
    }
  });

  it('classifies kernels and step-graph ops alike', () => {
    expect(Object.entries(KERNEL).map(([, k]) => opClassOfKernel(k))).toEqual(['matmul', 'attention', 'elementwise']);
    expect(['matmul', 'attention_bwd', 'rms_norm', 'cast'].map(opClassOfOp)).toEqual([
      'matmul',
      'attention',
      'elementwise',
      'elementwise',
    ]);
  });

  it('refuses a group whose collectives have one size, and a file that is no trace', () => {
    const one = [1, 2, 3].map((k) => ({
      rank: 0,
      name: 'ag',
      kind: 'all_gather' as const,
      group: 'dp',
      groupSize: 8,
      bytes: 1 << 20,
      durUs: 30 + k,
    }));
    expect(() => fitCollectives(one)).toThrow(ImportError);
    expect(() => fitCollectives(one)).toThrow(/group 'dp': its 3 collectives have one size/);
    const bad = traceSamples([{ name: 'x.json', json: { foo: 1 } }]);
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error.message).toBe('x.json: not a Kineto trace (no traceEvents array)');
  });
});
