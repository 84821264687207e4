// torch 2.15's nested-wait guard past the recursion: graphs where a wait handled inside another's
// handling still has exposed time and prefetches itself, so torch 2.15 takes the guard's gated
// branches (test/fixtures/torch_pass/guard_branches, made by tools/torch_pass_versions/guard_branches.py).
// The port's torch-2.15 profile reaches torch 2.15.0's order and exposed times; where torch 2.14.1
// finished, its torch-2.14 profile reaches 2.14's.
import { describe, expect, it } from 'vitest';
import { type Answer, expectAnswer, oneRegionAnswer } from '../../helpers/one_region_answer';
import { gzJsonReader } from '../../helpers/torch_fixtures';
import { AUTOBUCKETING_PROFILES, type AutobucketingOptions } from '../../../src/backends/autobucketing/options';
import { makeCostModel } from '../../../src/estimate';

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

const run = (c: Case, opts: AutobucketingOptions): Answer => oneRegionAnswer(c.dump, cost, opts);

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
