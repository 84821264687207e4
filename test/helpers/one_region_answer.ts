// The torch-pass guard fixtures' check (test/fixtures/torch_pass/guard_*): one fx dump of a single
// pass region, scheduled by the port, answers with its order and each collective's exposed time,
// compared with what torch recorded.
import { expect } from 'vitest';
import type { AutobucketingOptions } from '../../src/backends/autobucketing/options';
import { buildTorchGraph, passRegions } from '../../src/backends/autobucketing/torch_graph';
import { scheduleOverlap } from '../../src/backends/autobucketing/torch_scheduler';
import { indexGraph } from '../../src/backends/graph_index';
import type { CostModel } from '../../src/estimate';
import { importFxGraph } from '../../src/graph';

/** Schedule order by node name, and each collective's exposed time by its start node's name. */
export interface Answer {
  readonly order: string[];
  readonly exposedMs: Record<string, number>;
}

/** The port's answer on a dump that holds exactly one pass region. */
export function oneRegionAnswer(dump: unknown, cost: CostModel, opts: AutobucketingOptions): Answer {
  const r = importFxGraph(dump);
  if (!r.ok) throw r.error;
  const ix = indexGraph(r.value);
  const regions = [...passRegions(ix)];
  expect(regions).toHaveLength(1);
  const tg = buildTorchGraph(ix, cost, regions[0]);
  const s = scheduleOverlap(tg, opts);
  return {
    order: s.order.map((t) => tg.name[t]),
    exposedMs: Object.fromEntries(s.colls.map((ci) => [tg.name[ci.start], ci.exposedMs])),
  };
}

/** The same order, the same collectives, each exposed time to 1e-9 ms. */
export function expectAnswer(got: Answer, want: Answer): void {
  expect(got.order).toEqual(want.order);
  expect(Object.keys(got.exposedMs).sort()).toEqual(Object.keys(want.exposedMs).sort());
  for (const [name, ms] of Object.entries(want.exposedMs)) expect(got.exposedMs[name], name).toBeCloseTo(ms, 9);
}
