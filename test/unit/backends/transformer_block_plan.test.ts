// transformer_block on built step graphs as torch's manual scheduler runs it: jit buckets each
// module bucket plan entry in the forward and the backward graph (packed in graph order); the joint
// graph (aot_fx_trace) packs each bucket in FSDP2's parameter order; the reasons name the plan entry
// and the overlap dependency torch added.
import { describe, expect, it } from 'vitest';
import { runTransformerBlock, type Schedule } from '../../../src/backends';
import { fsdpParamModuleOrder } from '../../../src/backends/manual';
import { buildStepGraph, type StepGraph } from '../../../src/graph';
import { expectValidSchedule, rooflineCost } from './helpers';

const cost = rooflineCost();
const jit = buildStepGraph({ model: 'tiny', worldSize: 4 });
const joint: StepGraph = { ...jit, meta: { ...jit.meta, jointGraph: true } };
const L = Math.max(...jit.nodes.map((n) => n.layer ?? 0)) + 1;
const PLAN = ['tok_embeddings', ...Array.from({ length: L }, (_, l) => `layers.${l}`), 'norm+output'];

const moduleOfParam = (name: string) => name.split('.').slice(0, -1).join('.');
const bucketModules = (g: StepGraph, s: Schedule, kind: string, phase: string) => {
  const byName = new Map(g.nodes.map((n) => [n.name, n]));
  return s.buckets
    .filter((b) => b.kind === kind && byName.get(b.members[0])!.phase === phase)
    .map((b) => b.members.map((m) => moduleOfParam(byName.get(m)!.params![0])));
};

describe('transformer_block (torch manual scheduler) on a built graph', () => {
  const modes = [
    ['jit', jit],
    ['joint', joint],
  ] as const;
  it.each(modes)('%s: valid and deterministic, one bucket per plan entry', (_m, g) => {
    const s = runTransformerBlock(g, cost);
    expectValidSchedule(g, s);
    expect(runTransformerBlock(g, cost)).toEqual(s);
    const blocks = bucketModules(g, s, 'all_gather', 'forward');
    // tok_embeddings has one parameter: a bucket of one stays its own collective
    expect(blocks.map((b) => b[0].split('.').slice(0, 2).join('.'))).toEqual([...PLAN.slice(1, -1), 'norm']);
    expect(bucketModules(g, s, 'reduce_scatter', 'backward')).toHaveLength(L + 1);
  });

  it('runs the joint scheduler on an FSDP 4 × TP 2 joint graph: valid, deterministic, per-group buckets', () => {
    const tp = buildStepGraph({ model: 'small', worldSize: 8, mesh: { dpReplicate: 1, dpShard: 4, tp: 2 } });
    const g: StepGraph = { ...tp, meta: { ...tp.meta, jointGraph: true } };
    const s = runTransformerBlock(g, cost);
    expectValidSchedule(g, s);
    expect(runTransformerBlock(g, cost)).toEqual(s);
    const groupOf = new Map(g.nodes.map((n) => [n.name, n.collective?.group]));
    for (const b of s.buckets) expect(new Set(b.members.map((m) => groupOf.get(m))).size).toBe(1);
    expect(s.buckets.some((b) => groupOf.get(b.members[0]) === 'dp_shard')).toBe(true);
  });

  it('jit packs a backward bucket in graph order, the joint graph in FSDP2 parameter order', () => {
    const order = fsdpParamModuleOrder(jit.params);
    const rank = (m: string) => order.get(m)!;
    const layer1 = (g: StepGraph) => {
      const buckets = bucketModules(g, runTransformerBlock(g, cost), 'reduce_scatter', 'backward');
      return buckets.find((b) => b[0].startsWith('layers.1'))!;
    };
    const rs1 = jit.nodes.filter((n) => n.kind === 'reduce_scatter' && n.layer === 1);
    const graphOrder = rs1.map((n) => moduleOfParam(n.params![0]));
    expect(layer1(jit)).toEqual(graphOrder);
    expect(layer1(joint)).toEqual([...graphOrder].sort((a, b) => rank(a) - rank(b)));
    expect(layer1(joint)).not.toEqual(layer1(jit));
  });

  it('orders FSDP2 parameters as torchtitan registers them: attention, feed_forward, then the norms', () => {
    const order = [...fsdpParamModuleOrder(jit.params).keys()];
    expect(order.slice(0, 10)).toEqual([
      'tok_embeddings',
      'layers.0.attention.wq',
      'layers.0.attention.wk',
      'layers.0.attention.wv',
      'layers.0.attention.wo',
      'layers.0.feed_forward.w1',
      'layers.0.feed_forward.w2',
      'layers.0.feed_forward.w3',
      'layers.0.attention_norm',
      'layers.0.ffn_norm',
    ]);
    expect(order.slice(-2)).toEqual(['norm', 'output']);
  });

  it('names the plan entry of every bucketed collective and the overlap each bucket got', () => {
    const s = runTransformerBlock(jit, cost);
    const bucketed = s.reasons.filter((r) => r.code === 'block_bucket');
    const colls = jit.nodes.filter((n) => n.collective !== undefined && n.params !== undefined);
    expect(new Set(bucketed.map((r) => r.node))).toEqual(new Set(colls.map((n) => n.name)));
    for (const r of bucketed) {
      if (r.detail?.kind !== 'block_bucket') throw new Error('block_bucket reason without its detail');
      expect(PLAN[r.detail.entry - 1]).toBe(r.detail.module);
      expect(r.detail.entries).toBe(PLAN.length);
    }
    const prefetch = s.reasons.filter((r) => r.detail?.kind === 'block_prefetch_all_gather');
    // torch starts every forward all-gather bucket but the first before the previous entry's wait
    const atWait = (r: (typeof prefetch)[number]) => (r.detail as { at: string }).at === 'wait';
    const fwdBefore = prefetch.filter((r) => atWait(r) && !r.node.includes('.bwd.'));
    expect(new Set(fwdBefore.map((r) => (r.detail as { before: string }).before))).toEqual(new Set(PLAN.slice(0, -1)));
    const deferred = s.reasons.filter((r) => r.detail?.kind === 'block_prefetch_reduce_scatter');
    const last = deferred.filter((r) => (r.detail as { next: string | null }).next === null);
    expect(new Set(last.map((r) => (r.detail as { module: string }).module))).toEqual(new Set(['tok_embeddings']));
  });
});
