// torch 2.15's nested-wait guard past the recursion: graphs where a wait handled inside another's
// handling still has exposed time and prefetches itself, so torch 2.15 takes the guard's gated
// branches (test/fixtures/torch_pass/guard_branches, made by tools/torch_pass_versions/guard_branches.py).
// The port's torch-2.15 profile reaches torch 2.15.0's order and exposed times; where torch 2.14.1
// finished, its torch-2.14 profile reaches 2.14's.
import { describe, expect, it } from 'vitest';
import { gzJsonReader } from '../../helpers/torch_fixtures';
import { AUTOBUCKETING_PROFILES, type AutobucketingOptions } from '../../../src/backends/autobucketing/options';
import { buildTorchGraph, passRegions } from '../../../src/backends/autobucketing/torch_graph';
import { scheduleOverlap } from '../../../src/backends/autobucketing/torch_scheduler';
import { indexGraph } from '../../../src/backends/graph_index';
import { makeCostModel } from '../../../src/estimate';
import { importFxGraph } from '../../../src/graph';

interface Answer {
  readonly order: string[];
  readonly exposedMs: Record<string, number>;
}
interface Case extends Answer {
  readonly dump: unknown;
  readonly branches: Record<string, number>;
  readonly torch214: Answer | { readonly error: string };
}
const FIXTURE = gzJsonReader(new URL('../../fixtures/torch_pass/guard_branches/', import.meta.url))(
  'cases.json.gz',
) as { torch: string; torch214: string; cases: Record<string, Case> };
const SEEDS = Object.keys(FIXTURE.cases);
// the generator's pass arguments: torch's defaults without pre-bucketing or off-path batching
const argsOf = (profile: 'torch-2.14' | 'torch-2.15'): AutobucketingOptions => ({
  ...AUTOBUCKETING_PROFILES[profile],
  pre_bucketing_fsdp_collectives: false,
  max_off_bucket_gb: 0,
});
const cost = makeCostModel({ hardware: 'h100', network: 'nccl-analytical' });

function run(c: Case, opts: AutobucketingOptions): Answer {
  const r = importFxGraph(c.dump);
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

function expectAnswer(got: Answer, want: Answer): void {
  expect(got.order).toEqual(want.order);
  expect(Object.keys(got.exposedMs).sort()).toEqual(Object.keys(want.exposedMs).sort());
  for (const [name, ms] of Object.entries(want.exposedMs)) expect(got.exposedMs[name], name).toBeCloseTo(ms, 9);
}

describe("torch 2.15's nested-wait guard, gated branches", () => {
  it('torch 2.15.0 made them, each taking a gated branch; 2.14.1 ran them too', () => {
    expect(FIXTURE.torch.startsWith('2.15.0+')).toBe(true);
    expect(FIXTURE.torch214.startsWith('2.14.1+')).toBe(true);
    const gated = ['active_not_hidden', 'candidate_started', 'force_refused'];
    for (const s of SEEDS)
      expect(
        gated.some((b) => FIXTURE.cases[s].branches[b] > 0),
        s,
      ).toBe(true);
  });

  it.each(SEEDS)("seed %s: torch-2.15 reaches torch 2.15's order and exposed times", (seed) => {
    expectAnswer(run(FIXTURE.cases[seed], argsOf('torch-2.15')), FIXTURE.cases[seed]);
  });

  // without the guard the port starts a candidate twice (candidate_started), or lets a nested wait
  // hide the outer collective (active_not_hidden): another order or other exposed times
  it.each(SEEDS)('seed %s: guard_nested_waits off answers otherwise (the gated branch decides)', (seed) => {
    const c = FIXTURE.cases[seed];
    const off = run(c, { ...argsOf('torch-2.15'), guard_nested_waits: false });
    const sameExposure = Object.entries(c.exposedMs).every(([name, ms]) => Math.abs(off.exposedMs[name] - ms) < 1e-9);
    expect(off.order.join() === c.order.join() && sameExposure).toBe(false);
  });

  const finished = SEEDS.filter((s) => !('error' in FIXTURE.cases[s].torch214));
  it.skipIf(finished.length === 0).each(finished)("seed %s: torch-2.14 reaches torch 2.14's answers", (seed) => {
    expectAnswer(run(FIXTURE.cases[seed], argsOf('torch-2.14')), FIXTURE.cases[seed].torch214 as Answer);
  });
});
