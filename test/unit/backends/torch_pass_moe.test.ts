// Tiny MoE steps torch 2.15.0 traced on a fake process group and passed with its own defaults
// (test/fixtures/torch_moe: 1 and 2 MoE layers, dense weights gathered on dp_shard, expert
// weights on efsdp, token dispatch / combine as all_to_all_single on ep): the port's 'torch-2.15'
// profile makes torch's pre-buckets and reaches its schedule, buckets, prefetches and exposure,
// and leaves every all-to-all unbucketed, its start and wait where torch put them.
import { describe, expect, it } from 'vitest';
import { type PreBucketExpected, itMatchesTorchPerPair, preBucketFixtures } from '../../helpers/prebucket';
import { runAutobucketing } from '../../../src/backends';
import { AUTOBUCKETING_PROFILES } from '../../../src/backends/autobucketing';
import { preBucketFsdp } from '../../../src/backends/autobucketing/pre_bucket';
import { buildTorchGraph, passRegions } from '../../../src/backends/autobucketing/torch_graph';
import { scheduleOverlap } from '../../../src/backends/autobucketing/torch_scheduler';
import { indexGraph } from '../../../src/backends/graph_index';
import { makeCostModel } from '../../../src/estimate';
import { NCCL_213_DEFAULT_TOPOLOGY } from '../../../src/estimate/nccl_2_13';
import { fixtureUrl } from '../../helpers/fixtures';

type MoeExpected = PreBucketExpected & { readonly torch: string; readonly allToAll: string[] };

const fixtures = preBucketFixtures(fixtureUrl('torch_moe/'));
const want = (pair: string, phase: string) => fixtures.want(pair, phase) as MoeExpected;
const cost = makeCostModel({ hardware: 'h100', network: 'nccl-analytical' });
const PROFILE = AUTOBUCKETING_PROFILES['torch-2.15'];
const PHASES = ['forward', 'backward'] as const;
const plain = (name: string) => name.replace(/\.bw$/, '');

/** Each all-to-all's [start, wait] positions in a schedule order of names. */
function allToAllSlots(order: readonly string[], waitOf: ReadonlyMap<string, string>, names: readonly string[]) {
  return Object.fromEntries(names.map((a) => [a, [order.indexOf(a), order.indexOf(waitOf.get(a) ?? '?')]]));
}

describe('torch 2.15.0 on MoE steps', () => {
  it('the fixtures: torch 2.15.0, its defaults, the all-to-alls each phase has on ep, none bucketed', () => {
    expect(fixtures.pairs).toEqual(['moe_1layer', 'moe_1layer_sendw', 'moe_2layer']);
    // dispatch + combine a layer; _sendw also sends the gate weights: a second, independent dispatch
    for (const [pair, allToAlls] of [
      ['moe_1layer', 2],
      ['moe_1layer_sendw', 3],
      ['moe_2layer', 4],
    ] as const) {
      for (const phase of PHASES) {
        const w = want(pair, phase);
        expect(w.torch.startsWith('2.15.0+')).toBe(true);
        expect(w.knobs.pre_bucketing_fsdp_collectives).toBe(PROFILE.pre_bucketing_fsdp_collectives);
        expect(w.allToAll).toHaveLength(allToAlls);
        const bucketed = [...w.buckets, ...w.preBuckets].flat();
        expect(bucketed.filter((n) => n.includes('all_to_all'))).toEqual([]);
      }
    }
  });

  itMatchesTorchPerPair(fixtures, PROFILE, cost);

  it.each(fixtures.pairs)('%s: all-to-alls imported on ep, unbucketed, start and wait where torch put them', (pair) => {
    const graph = fixtures.load(pair);
    const a2a = graph.nodes.filter((n) => n.kind === 'all_to_all');
    expect(a2a.map((n) => [n.collective?.group, n.collective?.groupSize])).toEqual(a2a.map(() => ['ep', 2]));
    const waitOf = new Map(graph.nodes.filter((n) => n.waitOf).map((n) => [plain(n.waitOf!), plain(n.name)]));
    const pre = preBucketFsdp(graph, PROFILE, NCCL_213_DEFAULT_TOPOLOGY);
    const ix = indexGraph(pre?.graph ?? graph);
    for (const region of passRegions(ix)) {
      const w = want(pair, region.phase);
      const tg = buildTorchGraph(ix, cost, region);
      const mine = [...tg.collectives].map((t) => plain(tg.name[t])).filter((n) => n.includes('all_to_all'));
      expect(mine.sort()).toEqual([...w.allToAll].sort());
      const order = scheduleOverlap(tg, PROFILE).order.map((t) => plain(tg.name[t]));
      expect(allToAllSlots(order, waitOf, w.allToAll)).toEqual(allToAllSlots(w.scheduleOrder, waitOf, w.allToAll));
    }
    const s = runAutobucketing(graph, cost, PROFILE);
    expect(s.buckets.flatMap((b) => b.members).filter((m) => m.includes('all_to_all'))).toEqual([]);
    for (const p of s.passStats ?? [])
      for (const a of want(pair, p.phase).allToAll)
        expect(p.overlapping[a]).toEqual(want(pair, p.phase).overlapping[a]);
  });
});
