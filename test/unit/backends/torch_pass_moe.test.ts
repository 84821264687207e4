// Tiny MoE steps torch 2.15.0 traced on a fake process group and passed with its own defaults
// (test/fixtures/torch_moe: 1 and 2 MoE layers, dense weights gathered on dp_shard, expert
// weights on efsdp, token dispatch / combine as all_to_all_single on ep): the port's 'torch-2.15'
// profile makes torch's pre-buckets and reaches its schedule, buckets, prefetches and exposure,
// and leaves every all-to-all unbucketed where torch put its start and wait.
import { describe } from 'vitest';
import { itMatchesTorchPerPair, preBucketFixtures } from '../../helpers/prebucket';
import { AUTOBUCKETING_PROFILES } from '../../../src/backends/autobucketing';
import { makeCostModel } from '../../../src/estimate';
import { fixtureUrl } from '../../helpers/fixtures';

const fixtures = preBucketFixtures(fixtureUrl('torch_moe/'));
const cost = makeCostModel({ hardware: 'h100', network: 'nccl-analytical' });
const PROFILE = AUTOBUCKETING_PROFILES['torch-2.15'];

describe('torch 2.15.0 on MoE steps', () => {
  itMatchesTorchPerPair(fixtures, PROFILE, cost);
});
