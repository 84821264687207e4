// The sweep slice in Node (inline runner): rows arrive point by point, Stop ends the run, a point
// loads its config, bad axes become the panel's error, and the URL codec round-trips the axes.
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../../src/config';
import { parseVary, runSweep } from '../../../src/pipeline/sweep';
import { createAppStore } from '../../../src/store/app_store';
import { sweepFromUrl, sweepToUrl } from '../../../src/store/sweep_slice';
import { runPoints, type SweepMessage } from '../../../src/store/sweep_runner';
import { readUrlState, writeUrl } from '../../../src/store/url_sync';

const until = async (f: () => boolean) => {
  for (let i = 0; i < 2000 && !f(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(f()).toBe(true);
};

describe('sweep slice', () => {
  it('collects the rows runSweep gives, with progress, then loads a point', async () => {
    const store = createAppStore();
    const axes = [parseVary('ranks=2,4,8')];
    store.getState().startSweep(axes);
    expect(store.getState().sweepProgress).toEqual({ done: 0, total: 3 });
    await until(() => !store.getState().sweepRunning);
    const s = store.getState();
    expect(s.sweepError).toBeNull();
    expect(s.sweepProgress).toEqual({ done: 3, total: 3 });
    expect(s.sweepRows).toEqual(runSweep(defaultConfig(), axes, ['aot_eager', 'aot_eager_autobucketing']));
    s.loadSweepPoint(2);
    expect(store.getState().config).toEqual({ ...defaultConfig(), ranks: 8 });
  });

  it('stops between points on Stop', async () => {
    const store = createAppStore();
    store.getState().startSweep([parseVary('seed=0:50:1')]);
    await until(() => (store.getState().sweepProgress?.done ?? 0) >= 1);
    store.getState().stopSweep();
    expect(store.getState().sweepRunning).toBe(false);
    expect(store.getState().sweepRows.length).toBeLessThan(51 * 2);
  });

  it('runs no point after Stop: the runner returns at its next check, without a done message', async () => {
    const sent: SweepMessage[] = [];
    let stopped = false;
    const req = { base: defaultConfig(), axes: [parseVary('seed=0:50:1')], backends: ['aot_eager'] as const };
    const stopAfterFirst = (m: SweepMessage) => {
      sent.push(m);
      stopped = true;
    };
    await runPoints(
      req,
      stopAfterFirst,
      () => stopped,
      () => Promise.resolve(),
    );
    expect(sent.map((m) => (m.type === 'rows' ? `rows ${m.done}/${m.total}` : m.type))).toEqual(['rows 1/51']);
  });

  it('reports a value the config refuses instead of running', () => {
    const store = createAppStore();
    store.getState().startSweep([parseVary('straggler.rank=1,7')]);
    const s = store.getState();
    expect(s.sweepRunning).toBe(false);
    expect(s.sweepError).toMatch(/straggler\.rank/);
  });

  it('puts the axes in the URL and reads them back', () => {
    const axes = [parseVary('ranks=2:8:2'), parseVary('autobucketing.max_in_flight_gb=0.5,1')];
    expect(sweepToUrl(axes)).toBe('ranks=2,4,6,8|autobucketing.max_in_flight_gb=0.5,1');
    expect(sweepFromUrl(sweepToUrl(axes))).toEqual(axes);
    const store = createAppStore();
    store.setState({ sweepAxes: axes });
    const q = writeUrl(store.getState());
    const back = readUrlState(q);
    expect(back.sweep).toBe(sweepToUrl(axes));
    expect(back.error).toBeNull(); // the sweep key is not read as a config field
  });
});
