// The MoE screen in headless Chromium: the moe-ep story (dsv3-debug, 8 ranks, ep 2) draws an ep and
// an efsdp lane for every rank, its exposed band on ep is the data's; the caption's claims are
// recomputed here from the sides the page holds and must read the same; the selected all-to-all's
// details say what it moves; a refused ep says why; the diff lists its all-to-alls and a sweep runs
// over ep.

import { describe, expect, it } from 'vitest';
import type { SimConfig } from '../../src/config';
import type { SideResult } from '../../src/store';
import { exposedCommByGroup } from '../../src/store';
import { allToAllMoves } from '../../src/ui/all_to_all_words';
import { storyById, storyCaption } from '../../src/ui/stories';
import { appForFile } from './harness';
import { probeOf, setField, storeConfig } from './page';

const app = appForFile({ width: 1440, height: 900 }, '?story=moe-ep');
const SIM_TIMEOUT = 90_000;
const story = storyById('moe-ep')!;

async function storyShown(): Promise<void> {
  await app.page.waitForFunction(
    () => {
      const s = window.__FSDP_SIM__!.store.getState();
      if (s.simulating || s.story !== 'moe-ep' || s.sides.b?.source !== 'sim' || s.selection === null) return false;
      const cap = document.querySelector<HTMLElement>('[data-testid="story-caption"]');
      const t = window.__FSDP_SIM__!.timelines;
      return !!cap && !cap.textContent?.includes('Simulating…') && t.b?.events === s.sides.b.events.length;
    },
    null,
    { timeout: SIM_TIMEOUT },
  );
}

/** What the claims read of both sides, and the config, from the page's store. */
async function pageRun(): Promise<{ a: SideResult; b: SideResult; cfg: SimConfig }> {
  return app.page.evaluate(() => {
    const s = window.__FSDP_SIM__!.store.getState();
    const pick = (r: NonNullable<typeof s.sides.a>) => ({
      title: r.title,
      backend: r.backend,
      source: r.source,
      metrics: r.metrics,
      events: r.events,
      schedule: r.schedule && {
        buckets: r.schedule.buckets,
        reasons: r.schedule.reasons,
        passStats: r.schedule.passStats,
      },
      allocator: r.allocator,
      mismatch: r.mismatch,
    });
    return JSON.parse(JSON.stringify({ a: pick(s.sides.a!), b: pick(s.sides.b!), cfg: s.config }));
  });
}

describe('the MoE story', () => {
  it(
    "draws dp, ep and efsdp lanes for every rank; the ep band is the data's exposed ep comm",
    async () => {
      await storyShown();
      const { b, cfg } = await pageRun();
      for (const side of ['a', 'b'] as const) {
        const probe = await probeOf(app.page, side);
        for (const stream of ['comm:dp', 'comm:ep', 'comm:efsdp']) {
          const ranks = probe.laneStreams.flatMap((st, i) => (st === stream ? probe.laneRanks[i] : []));
          expect(new Set(ranks).size, `${side} ${stream}`).toBe(cfg.ranks);
        }
      }
      const probe = await probeOf(app.page, 'b');
      const ep0 = probe.laneStreams.findIndex((st, i) => st === 'comm:ep' && probe.laneRanks[i].includes(0));
      const want = exposedCommByGroup(0, b.events).ep;
      expect(want).toBeGreaterThan(0);
      expect(probe.redUs[ep0]).toBeCloseTo(want, 3);
      expect(await app.page.locator('[data-testid="legend"] [data-kinds="all_to_all"]').textContent()).toBe(
        'all-to-all',
      );
      expect(app.pageErrors).toEqual([]);
    },
    SIM_TIMEOUT,
  );

  it(
    "shows a caption whose every claim holds on the page's data and reads as they do",
    async () => {
      await storyShown();
      const d = await pageRun();
      expect(story.claims.map((c) => c(d).holds)).toEqual(story.claims.map(() => true));
      const text = await app.page.textContent('[data-testid="story-caption"] .story-text');
      expect(text).toBe(storyCaption(story, d));
      expect(text).toContain(`${d.b.metrics.collectives.all_to_all} all-to-alls`);
    },
    SIM_TIMEOUT,
  );

  it(
    'selects a dispatch all-to-all whose details say what it moves and why it is exposed',
    async () => {
      await storyShown();
      const d = await pageRun();
      const sel = await app.page.evaluate(() => window.__FSDP_SIM__!.store.getState().selection!);
      const e = d.b.events[sel.eventIndex];
      expect(e.kind).toBe('all_to_all');
      const facts = await app.page.textContent('[data-testid="all-to-all-facts"]');
      expect(facts).toContain(allToAllMoves(e, d.cfg));
      expect(facts).toMatch(/router's output/);
    },
    SIM_TIMEOUT,
  );

  it(
    'lists every all-to-all once in the diff, filtered by kind',
    async () => {
      await storyShown();
      await app.page.click('[data-testid="diff-toggle"]');
      await app.page.waitForSelector('[data-testid="diff-table"] tbody tr');
      await app.page.selectOption('[data-testid="diff-kind"]', 'all_to_all');
      const names = await app.page.$$eval('[data-testid="diff-table"] tbody tr', (trs) =>
        trs.map((tr) => tr.getAttribute('data-name')!),
      );
      const d = await pageRun();
      const onRank0 = d.b.events.filter((e) => e.rank === 0 && e.kind === 'all_to_all').map((e) => e.name);
      expect([...names].sort()).toEqual([...onRank0].sort());
      expect(new Set(names).size).toBe(names.length);
      await app.page.click('[data-testid="diff-toggle"]');
    },
    SIM_TIMEOUT,
  );

  it(
    'shows the ep knob in the config panel, and a refused ep says why in its field',
    async () => {
      await storyShown();
      const id = 'cfg-parallelism-expert_parallel_degree';
      const errorOf = `[data-testid="${id}-error"]`;
      expect(await app.page.inputValue(`[data-testid="${id}"]`)).toBe('2');
      await setField(app.page, 'parallelism.expert_parallel_degree', '3');
      const error = await app.page.textContent(errorOf);
      expect(error).toMatch(/expert_parallel_degree \(3\) must divide .*\(8 · 1 = 8\)/);
      expect(((await storeConfig(app.page)) as SimConfig).parallelism.expert_parallel_degree).toBe(2);
      await setField(app.page, 'parallelism.expert_parallel_degree', '2');
      expect(await app.page.locator(errorOf).count()).toBe(0);
    },
    SIM_TIMEOUT,
  );

  it(
    'sweeps over the ep degree: one row per point and backend, each ep a different step',
    async () => {
      await storyShown();
      await app.page.selectOption('[data-testid="sweep-field-0"]', 'parallelism.expert_parallel_degree');
      await app.page.fill('[data-testid="sweep-values-0"]', '1,2,4');
      await app.page.click('[data-testid="sweep-run"]');
      await app.page.waitForFunction(
        () => {
          const s = window.__FSDP_SIM__!.store.getState();
          return !s.sweepRunning && s.sweepRows.length === 6;
        },
        null,
        { timeout: SIM_TIMEOUT },
      );
      const rows = await app.page.evaluate(() =>
        window.__FSDP_SIM__!.store.getState().sweepRows.map((r) => ({
          ep: r.values['parallelism.expert_parallel_degree'],
          backend: r.backend,
          ms: r.stepTimeMs,
        })),
      );
      const a = rows.filter((r) => r.backend === 'aot_eager');
      expect(a.map((r) => r.ep)).toEqual([1, 2, 4]);
      expect(new Set(a.map((r) => r.ms)).size).toBe(3);
      expect(app.pageErrors).toEqual([]);
    },
    SIM_TIMEOUT * 2,
  );
});
