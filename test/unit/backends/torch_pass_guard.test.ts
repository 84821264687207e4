// torch 2.15's nested-wait guard (overlap_scheduling.py, wait_starts_being_handled) on small random
// graphs with all-gathers on three process groups, where torch 2.13 recurses without end on some
// (test/fixtures/torch_pass/guard_2_15, made by tools/torch_pass_versions/guard_probe.py): the port's
// torch-2.15 profile reaches torch 2.15.0's schedule order and every collective's exposed time.
import { describe, expect, it } from 'vitest';
import { expectAnswer, oneRegionAnswer } from '../../helpers/one_region_answer';
import { gzJsonReader } from '../../helpers/torch_fixtures';
import { AUTOBUCKETING_PROFILES } from '../../../src/backends/autobucketing/options';
import { makeCostModel } from '../../../src/estimate';
import { fixtureUrl } from '../../helpers/fixtures';

interface Case {
  readonly dump: unknown;
  readonly order: string[];
  readonly exposedMs: Record<string, number>;
  readonly recursesIn213: boolean;
}
const FIXTURE = gzJsonReader(fixtureUrl('torch_pass/guard_2_15/'))('cases.json.gz') as {
  torch: string;
  cases: Record<string, Case>;
};
const SEEDS = Object.keys(FIXTURE.cases);
// the probe's pass arguments: torch's defaults without pre-bucketing or off-path batching
const OPTS = { ...AUTOBUCKETING_PROFILES['torch-2.15'], pre_bucketing_fsdp_collectives: false, max_off_bucket_gb: 0 };
const cost = makeCostModel({ hardware: 'h100', network: 'nccl-analytical' });

describe('torch 2.15 on three-group graphs where 2.13 recurses', () => {
  it('torch 2.15.0 made them; half are graphs torch 2.13 could not schedule', () => {
    expect(FIXTURE.torch.startsWith('2.15.0+')).toBe(true);
    const rec = SEEDS.filter((s) => FIXTURE.cases[s].recursesIn213).length;
    expect(rec).toBeGreaterThan(10);
    expect(SEEDS.length).toBe(2 * rec);
  });

  it.each(SEEDS)("seed %s: torch's order and each collective's exposed time", (seed) => {
    const c = FIXTURE.cases[seed];
    expectAnswer(oneRegionAnswer(c.dump, cost, OPTS), c);
  });
});
