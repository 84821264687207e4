// Only like runs are compared: the headline and the metrics table draw a delta between sides of
// one model, mesh, clock and kernels, and name the difference otherwise; a hang is headlined as
// the hang (the ranks the data names) and a stopped live run as stopped, neither with a delta.

import { describe, expect, it } from 'vitest';
import { FIRST_SCREEN_CONFIG, parseConfigQuery, type SimConfig } from '../../../src/config';
import type { SideResult } from '../../../src/store';
import { liveRanks } from '../../../src/store/live_run';
import { simulateConfig } from '../../../src/store/engine';
import { liveTrainableConfig } from '../../../src/store/live_slice';
import { overHbmWords, sideHbmFit } from '../../../src/ui/hbm';
import { unlikeness } from '../../../src/ui/like_runs';
import { headlineView } from '../../../src/ui/panels/headline';

const cfgOf = (q: string): SimConfig => parseConfigQuery(q).config;
const tiny = cfgOf('model=tiny&ranks=8');
const sims = simulateConfig(tiny);
let big70: ReturnType<typeof simulateConfig> | undefined;
const big = () => (big70 ??= simulateConfig(cfgOf('model=llama3-70b&ranks=16'))); // seconds: once

/** A live side as the live slice tags it once the run ends. */
function live(kernels: string, extra: Partial<SideResult> = {}): SideResult {
  return {
    ...sims.b,
    source: 'live',
    clock: 'live: measured timing',
    title: 'aot_eager_autobucketing (live)',
    run: { model: 'tiny', mesh: 'FSDP 8', kernels },
    ...extra,
  };
}

describe('unlikeness', () => {
  it('compares two simulated sides of one config', () => {
    expect(unlikeness(sims.a, sims.b)).toBeNull();
    expect(headlineView(sims.a, sims.b, tiny, false).kind).toBe('compare');
  });

  it('never compares a llama3-70b simulation with a tiny live run on the same clock', () => {
    const b = live('webgpu', { clock: 'live: preset timing' }); // cost-model replay: the same clock kind
    const u = unlikeness(big().a, b);
    expect(u?.kind).toBe('run');
    expect(u?.text).toMatch(/A: llama3-70b, FSDP 16, cost model; B: tiny, FSDP 8, WebGPU kernels/);
    const h = headlineView(big().a, b, cfgOf('model=llama3-70b&ranks=16'), false);
    expect(h.text).not.toMatch(/%|→/);
  });

  it('says in the headline when a simulated step does not fit in HBM', () => {
    const cfg = cfgOf('model=llama3-70b&ranks=16');
    const { a, b } = big();
    const fit = sideHbmFit(a, cfg.hardware)!;
    expect(fit.fits).toBe(false);
    const h = headlineView(a, b, cfg, false);
    expect(h.kind).toBe('compare');
    expect(h.text).toContain(`all-gathers. Does not fit in HBM — A: ${overHbmWords(fit)}`);
  });

  it('keeps WebGPU and CPU kernels apart, and compares two runs of the same kernels', () => {
    expect(unlikeness(live('webgpu'), live('cpu'))?.text).toMatch(/A: WebGPU kernels; B: CPU kernels/);
    expect(unlikeness(live('cpu'), live('cpu'))).toBeNull();
  });

  it('marks a stopped run and draws no delta', () => {
    const u = unlikeness(live('cpu'), live('cpu', { stoppedAfter: 3 }));
    expect(u).toEqual({ kind: 'stopped', text: 'B stopped after step 3 (a partial live run): not compared.' });
    expect(unlikeness(live('cpu', { stoppedAfter: 0 }), live('cpu'))?.text).toMatch(/^A stopped before its first step/);
  });

  it("headlines a hang with the data's ranks and no speed-up figure", () => {
    const cfg = cfgOf('model=llama3-8b&ranks=8&jitterPct=20&alignment=false&seed=1'); // the hang story's
    const { a, b } = simulateConfig(cfg);
    const m = b.mismatch!;
    const h = headlineView(a, b, cfg, false);
    expect(h.kind).toBe('hang');
    expect(h.text).toContain(`B hangs at collective #${m.seq}: ranks ${m.ranks[0]} and ${m.ranks[1]} issued different`);
    expect(h.text).not.toMatch(/step [−+]|%/);
  });
});

describe('liveTrainableConfig', () => {
  it('switches llama3-70b × 64 to tiny on the live workers, the mesh scaled, the preset shapes', () => {
    const c = liveTrainableConfig(cfgOf('model=llama3-70b&ranks=64&parallelism.tensor_parallel_degree=8&localBatch=2'));
    const ranks = liveRanks(64);
    expect(c).toMatchObject({ model: 'tiny', ranks, localBatch: null, seqLen: null, activationCheckpointing: null });
    expect(c.parallelism).toMatchObject({ tensor_parallel_degree: 4, data_parallel_replicate_degree: 1 });
    expect(liveTrainableConfig(FIRST_SCREEN_CONFIG as SimConfig)).toMatchObject({ model: 'tiny', ranks: 8 });
  });

  it('leaves a config live can train as it is', () => {
    for (const q of ['model=tiny&ranks=4', 'model=tiny&ranks=8&parallelism.tensor_parallel_degree=2']) {
      expect(liveTrainableConfig(cfgOf(q))).toEqual(cfgOf(q));
    }
  });
});
