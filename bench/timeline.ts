// Bench 4: canvas timeline frame time in headless Chromium (page: bench/pages/timeline.ts) on
// synthetic traces of 10k, 100k and 1M events while zooming and panning, against a naive draw of
// the same events in the same page. Target: < 16 ms per frame (p95) at 100k events.

import { openPage } from './browser';
import type { TimelinePageOptions, TimelineRecord } from './pages/timeline';
import { fmt, type Row } from './stats';

export const FRAME_BUDGET_MS = 16;

export async function benchTimeline(url: string): Promise<{ rows: Row[]; records: TimelineRecord[] }> {
  const opts: TimelinePageOptions = {
    sizes: [10_000, 100_000, 1_000_000],
    ranks: 8,
    widthPx: 1600,
    naiveMaxFrames: 12,
    naiveBudgetMs: 8000,
  };
  const { browser, page } = await openPage('swiftshader', `${url}/bench/pages/timeline.html`);
  let records: TimelineRecord[];
  try {
    records = (await page.evaluate(
      (o) => (window as unknown as { __bench: { timeline(o: unknown): Promise<unknown> } }).__bench.timeline(o),
      opts,
    )) as TimelineRecord[];
  } finally {
    await browser.close();
  }
  const rows = records.map((r): Row => {
    const gated = r.events === 100_000;
    return {
      section: 'timeline',
      case: `${r.events / 1000}k events, ${r.lanes} lanes, ${r.frames} zoom/pan frames @ ${opts.widthPx}px`,
      value: `median ${fmt(r.oursMedianMs, 2)} ms, p95 ${fmt(r.oursP95Ms, 2)} ms (${fmt(r.rectsMedian, 0)} rects; columns built once ${fmt(r.buildMs, 0)} ms)`,
      baseline: `naive median ${fmt(r.naiveMedianMs, 1)} ms, p95 ${fmt(r.naiveP95Ms, 1)} ms (${r.naiveFrames} frames)`,
      ratio: `${fmt(r.naiveMedianMs / r.oursMedianMs, 1)}× faster`,
      target: gated ? `p95 < ${FRAME_BUDGET_MS} ms` : '',
      met: gated ? r.oursP95Ms < FRAME_BUDGET_MS : null,
    };
  });
  return { rows, records };
}
