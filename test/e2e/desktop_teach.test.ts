// Desktop teaching details in headless Chromium: tour cards beside their targets (never over them)
// naming only controls on screen, with B's step told from the metrics; Learn one layer scrolled
// into view, both sides on the same op, each inside its timeline's window at a readable zoom;
// whole knob labels at 1440 px; scaled byte units and the HBM warning on a config that does not
// fit; a legend entry for every kind drawn; a short unknown-parameter notice clear of the headline.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CONFIG_FIELDS } from '../../src/config';
import { TOUR_STEPS } from '../../src/ui/panels/tour';
import { KIND_CODES } from '../../src/ui/timeline/columns';
import { artifactsDir, launchBrowser, startPreview } from './harness';
import { metric, waitForApp, windowOf, skipTour } from './page';
import { cardOverlapsTarget, namedControlsMissing } from './tour_checks';

// explicit config: the tests do not lean on whatever the default is
const QUERY = '?model=llama3-8b&ranks=8';

let browser: Browser;
let srv: { url: string; close: () => Promise<void> };
let art: string;
const pageErrors: string[] = [];

interface OpenOpts {
  tourDone?: boolean;
  width?: number;
  height?: number;
  noWait?: boolean;
}

async function open(query: string, opts: OpenOpts = {}): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await browser.newContext({ viewport: { width: opts.width ?? 1440, height: opts.height ?? 900 } });
  if (opts.tourDone ?? true) await skipTour(ctx);
  const page = await ctx.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(`${srv.url}${query}`);
  if (!opts.noWait) await waitForApp(page);
  return { ctx, page };
}

beforeAll(async () => {
  art = await artifactsDir();
  srv = await startPreview();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await srv?.close();
});

describe('the tour on a desktop', () => {
  for (const vp of [
    { width: 1440, height: 900 },
    { width: 1280, height: 800 },
  ]) {
    it(`at ${vp.width}×${vp.height}: no card covers its target, every named control exists`, async () => {
      const { ctx, page } = await open(QUERY, { tourDone: false, ...vp });
      await page.locator('[data-testid="tour"]').waitFor();
      for (let k = 0; k < TOUR_STEPS.length; k++) {
        await page.waitForSelector(`[data-testid="tour"][data-step="${k}"][data-placed]`);
        expect(await cardOverlapsTarget(page), `step ${k}`).toBeNull();
        expect(await namedControlsMissing(page), `step ${k}`).toEqual([]);
        expect(await page.textContent('#tour-text')).not.toMatch(/\bHelp\b/); // no such button
        await page.screenshot({ path: join(art, `desktop_tour_${vp.width}_${k}.png`) });
        await page.click('[data-testid="tour-next"]');
      }
      await ctx.close();
    });
  }

  it('one step says what B does, with the numbers the metrics show', async () => {
    const { ctx, page } = await open(QUERY, { tourDone: false });
    await page.locator('[data-testid="tour"]').waitFor();
    const k = TOUR_STEPS.findIndex((s) => s.title === 'What B does differently');
    expect(k).toBeGreaterThan(0);
    for (let i = 0; i < k; i++) await page.click('[data-testid="tour-next"]');
    await page.waitForSelector(`[data-testid="tour"][data-step="${k}"]`);
    const text = (await page.textContent('#tour-text')) ?? '';
    expect(text).toMatch(/starts each collective as early/);
    expect(text).toMatch(/overlap/);
    expect(text).toMatch(/merges small ones into buckets/);
    const [agA, agB, rsA, rsB] = await Promise.all(
      [
        ['ag', 'a'],
        ['ag', 'b'],
        ['rs', 'a'],
        ['rs', 'b'],
      ].map(([k, s]) => metric(page, k, s as 'a' | 'b')),
    );
    expect(text).toContain(`A launches ${agA} all-gathers and ${rsA} reduce-scatters, B ${agB} and ${rsB}`);
    const buckets = await page.evaluate(
      () => window.__FSDP_SIM__!.store.getState().sides.b!.schedule!.buckets.filter((b) => b.members.length > 1).length,
    );
    expect(text).toContain(buckets > 0 ? `${buckets} bucket` : 'nothing merged');
    const overlap = await metric(page, 'overlap', 'b');
    expect(text).toContain(`${overlap.toFixed(1)} % of B's communication runs under compute`);
    await ctx.close();
  });
});

describe('Learn one layer', () => {
  it("scrolls into view; both sides walk one op, each inside its timeline's window, readable", async () => {
    const { ctx, page } = await open(QUERY);
    await page.click('[data-testid="help-walk"]');
    const panel = page.locator('[data-testid="step-through"]');
    await panel.waitFor();
    const inView = async () =>
      page.evaluate(() => {
        const r = document.querySelector('[data-testid="step-through"]')!.getBoundingClientRect();
        const c = document.querySelector('.walk-controls')!.getBoundingClientRect();
        return r.top >= 0 && r.top < window.innerHeight && c.bottom <= window.innerHeight;
      });
    await expect.poll(inView).toBe(true);
    const n = Number(await page.getAttribute('[data-testid="walk-slider"]', 'max')) + 1;
    // op 31: where pairing by position put A in the forward and B in the backward
    const visits = [...new Set([0, 1, 2, 3, 5, 8, 31, Math.floor(n / 2), n - 2, n - 1])].sort((x, y) => x - y);
    let apart = 0; // steps where A's and B's runs of the op lie far apart: each timeline must show its own
    let prevA = -1;
    for (const k of visits) {
      await page.fill('[data-testid="walk-slider"]', String(k));
      // the step is one op of the step graph, on both sides; A walks in its own order
      await expect
        .poll(async () => Number(await page.getAttribute('[data-testid="walk-a"]', 'data-index')))
        .toBeGreaterThan(prevA);
      prevA = Number(await page.getAttribute('[data-testid="walk-a"]', 'data-index'));
      const op = await page.getAttribute('[data-testid="walk-a"]', 'data-op');
      expect(await page.getAttribute('[data-testid="walk-b"]', 'data-op'), `op ${k}`).toBe(op);
      const ops = await Promise.all(
        (['a', 'b'] as const).map(async (side) => {
          const el = page.locator(`[data-testid="walk-${side}"]`);
          const num = async (a: string) => Number(await el.getAttribute(a));
          return { side, start: await num('data-start'), dur: await num('data-dur') };
        }),
      );
      const longest = Math.max(...ops.map((o) => o.dur));
      // the timelines drew the followed view (wait on the frame's probe, not on time)
      const drawnAround = async () => {
        const ws = await Promise.all(ops.map((o) => windowOf(page, o.side)));
        return ops.every((o, j) => o.start >= ws[j][0] - 0.001 && o.start + o.dur <= ws[j][1] + 0.001);
      };
      await expect.poll(drawnAround, { message: `op ${k} ${op}` }).toBe(true);
      for (const o of ops) {
        const [w0, w1] = await windowOf(page, o.side);
        expect(longest / (w1 - w0), `${o.side} op ${k}: readable`).toBeGreaterThanOrEqual(1 / 20);
      }
      const shifted = await page.locator('[data-testid="walk-shift"]').count();
      if (Math.abs(ops[0].start - ops[1].start) > 1000) {
        apart++;
        expect(shifted, `op ${k}: says B's timeline is shifted`).toBe(1);
      }
    }
    expect(apart).toBeGreaterThan(0); // the check met the case the issue names
    await page.click('[data-testid="walk-close"]');
    await expect.poll(async () => (await windowOf(page, 'b')).join()).toBe((await windowOf(page, 'a')).join());
    await ctx.close();
  });
});

describe('labels, units and warnings', () => {
  it('shows every knob label whole at 1440 px: none cut, all distinct', async () => {
    const { ctx, page } = await open(QUERY);
    const labels = await page.locator('.config .field').evaluateAll((els) =>
      els.map((e) => {
        const l = e.querySelector<HTMLElement>('.field-label')!;
        const cut = l.scrollWidth > l.clientWidth || l.scrollHeight > l.clientHeight + 1;
        return { path: e.getAttribute('data-field'), text: l.textContent, cut };
      }),
    );
    expect(labels.length).toBe(CONFIG_FIELDS.length);
    for (const f of CONFIG_FIELDS) expect(labels.find((l) => l.path === f.path)?.text).toBe(f.label);
    expect(labels.filter((l) => l.cut)).toEqual([]);
    const seen = await page
      .locator('.config .field-label')
      .evaluateAll((els) => els.map((e) => (e.textContent ?? '').replace(/\s+/g, '')));
    expect(new Set(seen).size).toBe(seen.length);
    for (const k of ['max_memory_increase_gb', 'max_memory_increase_ratio']) expect(seen).toContain(k);
    await ctx.close();
  });

  for (const width of [1280, 1440]) {
    it(`at ${width} px every config select shows its options whole; no label is a PR number`, async () => {
      const { ctx, page } = await open(QUERY, { width });
      const cut = await page.locator('.config select').evaluateAll((els) =>
        els.flatMap((el) => {
          const sel = el as HTMLSelectElement;
          const probe = sel.cloneNode(true) as HTMLSelectElement; // the same select at its own width
          probe.style.cssText = 'position:absolute;visibility:hidden;width:auto;max-width:none';
          sel.parentElement!.appendChild(probe);
          const need = probe.getBoundingClientRect().width;
          probe.remove();
          const has = sel.getBoundingClientRect().width;
          return has + 0.5 < need ? [`${sel.dataset.testid}: ${has.toFixed(0)} < ${need.toFixed(0)} px`] : [];
        }),
      );
      expect(cut).toEqual([]);
      expect(await page.locator('.config select').count()).toBeGreaterThan(5);
      const labels = await page.locator('.config .field-label').allTextContents();
      expect(labels.filter((l) => /#\d/.test(l))).toEqual([]);
      await ctx.close();
    });
  }

  it('llama3-70b × 64: scaled units, the does-not-fit warning on both timelines and the memory chart', async () => {
    const { ctx, page } = await open('?model=llama3-70b&ranks=64');
    const text = await page.evaluate(() => document.body.textContent ?? '');
    expect(text).not.toMatch(/\d{5,}(\.\d+)?\s(B|KiB|MiB|GiB|TiB|PiB)\b/); // a unit too small for its number
    for (const side of ['a', 'b']) {
      const warn = page.locator(`[data-testid="timeline-${side}"] [data-testid="hbm-warn"]`);
      expect(await warn.textContent()).toMatch(/does not fit in HBM: peak reserved [\d.]+\sGiB = [\d.]+ × h100 HBM/);
    }
    const line = page.locator('[data-testid="memory-chart"] [data-ref="hbm"]');
    expect(await line.count()).toBe(1);
    expect(await line.locator('text').textContent()).toMatch(/^h100 HBM 79\.18\sGiB$/);
    expect(await page.textContent('[data-testid="memory-hbm-note"]')).toMatch(/^A and B do not fit in h100 HBM/);
    await page.locator('[data-testid="memory-chart"]').screenshot({ path: join(art, 'desktop_memory_hbm.png') });
    await ctx.close();
  });

  it('a config that fits has no warning and says so under the memory chart', async () => {
    const { ctx, page } = await open(QUERY);
    expect(await page.locator('[data-testid="hbm-warn"]').count()).toBe(0);
    expect(await page.textContent('[data-testid="memory-hbm-note"]')).toMatch(/^A and B fit in h100 HBM/);
    // the y axis ticks round GiB (0, 10, 20, 30), not round bytes (9.31, 18.63, 27.94 GiB)
    const ticks = await page
      .locator('[data-testid="memory-chart"] g.chart-axis')
      .nth(1)
      .locator('.tick text')
      .allTextContents();
    expect(ticks.length).toBeGreaterThan(2);
    for (const t of ticks) expect(t).toMatch(/^\d+\sGiB$/);
    // no idle time reads '0 µs', not '0.00 µs'
    const idle = page.locator('[data-testid="metrics"] tr[data-metric="idle"] td[data-side="a"]');
    expect(await idle.getAttribute('data-value')).toBe('0');
    expect((await idle.textContent())?.replace(/\s/g, ' ')).toBe('0 µs');
    await ctx.close();
  });

  it('the legend has an entry for every kind the timelines draw, live-run kinds included', async () => {
    const { ctx, page } = await open(QUERY);
    const covered = async () =>
      page.evaluate(() => {
        const s = window.__FSDP_SIM__!.store.getState();
        const drawn = new Set([s.sides.a, s.sides.b].flatMap((r) => r?.events.map((e) => e.kind) ?? []));
        const legend = new Set(
          [...document.querySelectorAll('[data-testid="legend"] [data-kinds]')].flatMap((e) =>
            (e.getAttribute('data-kinds') ?? '').split(' '),
          ),
        );
        return { drawn: [...drawn].sort(), missing: [...drawn].filter((k) => !legend.has(k)) };
      });
    const before = await covered();
    expect(before.missing).toEqual([]);
    // a side that draws every kind the timeline knows (a live run's readback, upload, barrier; imports' copies)
    await page.evaluate(
      (kinds) => {
        const s = window.__FSDP_SIM__!.store.getState();
        const a = s.sides.a!;
        const events = a.events.map((e, i) => (i < kinds.length ? { ...e, kind: kinds[i] as typeof e.kind } : e));
        s.setSide('a', { ...a, events });
      },
      [...KIND_CODES],
    );
    await page.waitForSelector('[data-testid="legend"] [data-kinds="readback"]');
    const after = await covered();
    expect(after.drawn).toEqual([...KIND_CODES].sort());
    expect(after.missing).toEqual([]);
    await ctx.close();
  });

  it('an unknown URL parameter gets a short notice naming a few fields, clear of the headline', async () => {
    // the notice comes with the link, before the first simulation lands; the headline follows it
    const { ctx, page } = await open('?model=tiny&ranks=4&rank=3', { noWait: true });
    const notice = page.locator('[data-testid="notice-error"]');
    await notice.waitFor();
    await page.locator('[data-testid="headline"]').waitFor();
    const text = (await notice.textContent()) ?? '';
    expect(text).toMatch(/unknown URL parameter "rank": did you mean ranks/);
    const word = (p: string) => new RegExp(`(^|[\\s,(])${p.replace(/\./g, '\\.')}([\\s,?)]|$)`);
    const named = CONFIG_FIELDS.filter((f) => word(f.path).test(text));
    expect(named.length).toBeGreaterThan(0);
    expect(named.length).toBeLessThanOrEqual(3);
    expect(text).toMatch(new RegExp(`and ${CONFIG_FIELDS.length - named.length} more`));
    const n = (await notice.boundingBox())!;
    const h = (await page.locator('[data-testid="headline"]').boundingBox())!;
    const apart = n.x + n.width <= h.x || h.x + h.width <= n.x || n.y + n.height <= h.y || h.y + h.height <= n.y;
    expect(apart).toBe(true);
    expect(n.height).toBeLessThan(90); // three lines at most
    expect(pageErrors).toEqual([]);
    await ctx.close();
  });
});
