// Live start-up shows its progress (issue 30), in headless Chromium on SwiftShader (core WebGPU):
// Run live on tiny × 8 with WebGPU kernels shows per-rank progress within a second of the click,
// each rank's stage advances (started → compiling k/n → ready → first step), the kernels line
// says what ran and on which adapter, and the main thread keeps animating while the workers start:
// no long task and no gap between animation frames over the limits below.

import { describe, expect, it } from 'vitest';
import { appForFile } from './harness';
import { setField } from './page';

const app = appForFile({ width: 1440, height: 900 }, '?model=tiny&ranks=8');

const LIVE_TIMEOUT = 180_000;
/** The status must show per-rank progress this soon after the click (ms). */
const FIRST_PROGRESS_MS = 1000;
/**
 * The longest main-thread task allowed from the click to the first step (ms): measured 116 and 162
 * ms here (the first step's timeline, the workers' start), with margin for a loaded machine.
 */
const LONG_TASK_MS = 250;
/** The longest gap between two animation frames from the click to the first step (ms): measured 150-267. */
const FRAME_GAP_MS = 500;

interface StartupWatch {
  clickAt: number;
  firstRanksAt: number; // the per-rank strip first in the DOM
  firstStepAt: number;
  longTasks: { start: number; ms: number }[];
  frameGaps: { at: number; ms: number }[];
  stages: string[][]; // per rank: the stages in the order the store showed them
  compiled: number[]; // per rank: the highest "k" of "k/n" seen
  kernels: number[]; // per rank: n
  statuses: string[];
}

describe('live start-up progress', () => {
  it(
    "shows each rank's stage within a second, advances it, and keeps the page animating",
    async () => {
      const p = app.page;
      await p.selectOption('[data-testid="cfg-live-kernels"]', 'webgpu');
      await setField(p, 'live.steps', '1');
      await p.waitForFunction(() => !window.__FSDP_SIM__!.store.getState().simulating);
      await p.evaluate(() => {
        const w: StartupWatch = {
          clickAt: 0,
          firstRanksAt: 0,
          firstStepAt: 0,
          longTasks: [],
          frameGaps: [],
          stages: [],
          compiled: [],
          kernels: [],
          statuses: [],
        };
        (window as unknown as { __watch: StartupWatch }).__watch = w;
        new PerformanceObserver((l) => {
          for (const e of l.getEntries()) {
            w.longTasks.push({ start: Math.round(e.startTime), ms: Math.round(e.duration) });
          }
        }).observe({ type: 'longtask' });
        let last = 0;
        const frame = (t: number) => {
          if (w.clickAt > 0 && w.firstStepAt === 0 && last > 0)
            w.frameGaps.push({ at: Math.round(last), ms: t - last });
          last = t;
          if (w.firstStepAt === 0) requestAnimationFrame(frame);
        };
        requestAnimationFrame(frame);
        document.addEventListener(
          'click',
          (ev) => {
            if ((ev.target as Element).closest('[data-testid="live-run"]')) w.clickAt = performance.now();
          },
          { capture: true },
        );
        new MutationObserver(() => {
          const ranks = document.querySelector('[data-testid="live-ranks"] li');
          if (w.firstRanksAt === 0 && ranks) w.firstRanksAt = performance.now();
          const s = document.querySelector('[data-testid="live-status"]')?.textContent ?? '';
          if (w.clickAt > 0 && s !== w.statuses[w.statuses.length - 1]) w.statuses.push(s);
        }).observe(document.body, { subtree: true, childList: true, characterData: true });
        window.__FSDP_SIM__!.store.subscribe((st) => {
          st.live.startup.forEach((r, i) => {
            const seen = (w.stages[i] ??= []);
            if (seen[seen.length - 1] !== r.stage) seen.push(r.stage);
            w.compiled[i] = Math.max(w.compiled[i] ?? 0, r.compiled);
            w.kernels[i] = r.kernels;
          });
          if (st.live.step >= 1 && w.firstStepAt === 0) w.firstStepAt = performance.now();
        });
      });
      await p.click('[data-testid="live-run"]');
      const stepped = () => window.__FSDP_SIM__!.store.getState().live.step >= 1;
      await p.waitForFunction(stepped, null, { timeout: LIVE_TIMEOUT });
      await p.waitForSelector('[data-testid="live-run"]', { timeout: LIVE_TIMEOUT });
      const w = await p.evaluate(() => (window as unknown as { __watch: StartupWatch }).__watch);
      const during = w.longTasks.filter((t) => t.start >= w.clickAt && t.start <= w.firstStepAt);
      const frames = w.frameGaps.map((g) => g.ms).sort((a, b) => b - a);
      console.info(
        JSON.stringify({
          firstProgressMs: Math.round(w.firstRanksAt - w.clickAt),
          firstStepS: (w.firstStepAt - w.clickAt) / 1000,
          longTasks: during.map((t) => ({ ...t, start: Math.round(t.start - w.clickAt) })),
          worstFrameGaps: [...w.frameGaps]
            .sort((a, b) => b.ms - a.ms)
            .slice(0, 5)
            .map((g) => ({ at: Math.round(g.at - w.clickAt), ms: Math.round(g.ms) })),
          stages: w.stages,
          compiled: w.compiled,
          kernels: w.kernels,
          statuses: w.statuses.slice(0, 4).concat(w.statuses.slice(-3)),
        }),
      );
      expect(w.firstRanksAt - w.clickAt).toBeLessThan(FIRST_PROGRESS_MS);
      expect(w.stages).toHaveLength(8);
      for (const [i, seen] of w.stages.entries()) {
        expect(seen.slice(-4), `rank ${i}`).toEqual(['started', 'compiling', 'ready', 'stepped']);
        expect(w.kernels[i], `rank ${i} pipelines`).toBeGreaterThan(5);
        expect(w.compiled[i]).toBe(w.kernels[i]);
      }
      expect(w.statuses.some((s) => /kernels \d+\/\d+ compiled/.test(s))).toBe(true);
      expect(Math.max(0, ...during.map((t) => t.ms))).toBeLessThan(LONG_TASK_MS);
      expect(frames[0] ?? 0).toBeLessThan(FRAME_GAP_MS);
      const live = await p.evaluate(() => window.__FSDP_SIM__!.store.getState().live);
      console.info(JSON.stringify(live.startup.map((r) => r.at)));
      expect(live.kernels).toMatchObject({ choice: 'webgpu', kind: 'webgpu' });
      expect(live.kernels!.device).toMatch(/^webgpu: .*swiftshader/);
      const adapter = await p.textContent('[data-testid="live-adapter"]');
      expect(adapter).toMatch(/^WebGPU kernels on .*swiftshader/);
      expect(app.pageErrors).toEqual([]);
    },
    LIVE_TIMEOUT,
  );

  it('names what auto will pick before a run: the adapter the runtime found', async () => {
    await app.page.selectOption('[data-testid="cfg-live-kernels"]', 'auto');
    await expect
      .poll(() => app.page.textContent('[data-testid="live-adapter"]'))
      .toMatch(/^WebGPU kernels on google swiftshader \(fallback, core\): auto found this adapter/);
  });
});
