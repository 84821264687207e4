// transformer_block: torchtitan SimpleFSDP's manual bucketing mode
// (torchtitan/experiments/simple_fsdp, `compile.backend = "aot_eager_blockbucketing"`-style
// manual overlap): one all-gather bucket and one reduce-scatter bucket per transformer block,
// with tok_embeddings and [norm, output] as their own modules. Each phase's next all-gather
// bucket is issued one block ahead (right after the previous bucket's wait, before that block's
// compute), in forward and in the backward re-gather; a block's reduce-scatter bucket is issued
// after its last gradient and waited one block later (after the next bucket is issued), the last
// one just before the optimizer.
// The order is built by list scheduling: each unit (node, merged start, merged wait) gets a
// target position, ancestors inherit their descendants' earlier targets, and Kahn's algorithm
// pops the ready unit with the smallest (target, original index).
// On a mesh, buckets and the one-block-ahead chain are per process group (a block has one
// dp_shard all-gather bucket, one tp all-reduce bucket, ...); activation collectives (sequence
// parallel, no parameter) stay where the program has them: they are on the critical path.

import type { CostModel } from '../estimate/types';
import type { CollectiveKind, GraphNode, StepGraph } from '../graph/types';
import { indexGraph, type GraphIndex } from './graph_index';
import { GraphError } from '../graph/errors';
import { kahnOrder } from '../graph/toposort';
import { resolveOptions } from './options';
import { bucketKey, rewriteGraph, type BucketPlan, type OrderItem } from './rewrite';
import type { Backend, Reason, Schedule } from './types';

export type TransformerBlockOptions = Record<string, never>;

/** torchtitan's module of a node: 'layers.N', 'tok_embeddings' or 'norm+output'. */
export function moduleOf(node: GraphNode): string {
  if (node.layer !== undefined) return `layers.${node.layer}`;
  const fqn = node.params?.[0] ?? node.name;
  const top = fqn.split('.')[0];
  if (top === 'norm' || top === 'output') return 'norm+output';
  return top;
}

interface Group {
  readonly members: number[]; // collective node numbers, original order
  readonly module: string;
  readonly kind: CollectiveKind;
  readonly phase: string;
  readonly commGroup: string; // the process group
}

export function runTransformerBlock(graph: StepGraph, _cost: CostModel, options?: Partial<TransformerBlockOptions>): Schedule {
  const opts = resolveOptions('transformer_block', {}, {}, options as Record<string, unknown> | undefined);
  const ix = indexGraph(graph);
  // merging a module's collectives can only create a cycle on hand-made graphs where one member
  // depends on another; then every collective keeps its own start and wait
  const planned = plan(ix, false) ?? plan(ix, true)!;
  const { graph: out, buckets } = rewriteGraph(ix, planned.items, planned.plans);
  return { backend: 'transformer_block', graph: out, buckets, reasons: planned.reasons, options: opts };
}

function plan(ix: GraphIndex, split: boolean): { items: OrderItem[]; plans: BucketPlan[]; reasons: Reason[] } | null {
  const { n, nodes } = ix;
  // ---- groups: (kind, phase, module, bucket key) ----
  const groups: Group[] = [];
  const groupIds = new Map<string, number>();
  const groupOf = new Int32Array(n).fill(-1); // collective start and wait → group
  for (let i = 0; i < n; i++) {
    if (ix.waitOfColl[i] < 0) continue;
    const node = nodes[i];
    if (node.params === undefined) continue; // an activation collective: a plain unit, in place
    const kind = node.collective!.kind;
    const id = `${kind}|${node.phase}|${moduleOf(node)}|${bucketKey(node)}${split ? `|${i}` : ''}`;
    let g = groupIds.get(id);
    if (g === undefined) {
      g = groups.push({ members: [], module: moduleOf(node), kind, phase: node.phase, commGroup: node.collective!.group }) - 1;
      groupIds.set(id, g);
    }
    groups[g].members.push(i);
    groupOf[i] = g;
    groupOf[ix.waitOfColl[i]] = g;
  }
  // ---- units: every non-collective node is one; a group's starts are one, its waits another ----
  const unitOf = new Int32Array(n);
  const unitNode: number[] = []; // node number for plain units, -1 for group units
  const unitGroup: number[] = []; // group of a group unit
  const startUnit = groups.map(() => -1);
  const waitUnit = groups.map(() => -1);
  for (let i = 0; i < n; i++) {
    const g = groupOf[i];
    if (g < 0) {
      unitOf[i] = unitNode.push(i) - 1;
      unitGroup.push(-1);
    } else {
      const table = ix.waitOfColl[i] >= 0 ? startUnit : waitUnit;
      if (table[g] < 0) {
        table[g] = unitNode.push(-1) - 1;
        unitGroup.push(g);
      }
      unitOf[i] = table[g];
    }
  }
  const U = unitNode.length;
  const unitSuccs: number[][] = Array.from({ length: U }, () => []);
  const indeg0 = new Int32Array(U);
  const firstIdx = new Float64Array(U).fill(Infinity);
  const lastPredOf = new Int32Array(U).fill(-1); // dedupe: last unit that added an edge into p
  const seenPair = new Map<number, Set<number>>(); // group units only: many members share preds
  for (let i = 0; i < n; i++) {
    const u = unitOf[i];
    if (i < firstIdx[u]) firstIdx[u] = i;
    const grouped = unitNode[u] < 0;
    for (let k = ix.predOff[i]; k < ix.predOff[i + 1]; k++) {
      const p = unitOf[ix.predIdx[k]];
      if (p === u) continue;
      if (grouped) {
        let set = seenPair.get(u);
        if (set === undefined) seenPair.set(u, (set = new Set()));
        if (set.has(p)) continue;
        set.add(p);
      } else if (lastPredOf[p] === u) continue;
      lastPredOf[p] = u;
      unitSuccs[p].push(u);
      indeg0[u]++;
    }
  }
  // ---- targets ----
  const own = Float64Array.from(firstIdx);
  const minOf = (xs: number[]) => xs.reduce((a, b) => Math.min(a, b), Infinity);
  const maxOf = (xs: number[]) => xs.reduce((a, b) => Math.max(a, b), -Infinity);
  const reasons: Reason[] = [];
  const byPhaseKind = new Map<string, number[]>();
  groups.forEach((g, gi) => {
    const k = `${g.kind}|${g.phase}|${g.commGroup}`;
    const list = byPhaseKind.get(k);
    if (list) list.push(gi);
    else byPhaseKind.set(k, [gi]);
  });
  for (const list of byPhaseKind.values()) {
    list.sort((a, b) => groups[a].members[0] - groups[b].members[0]);
    list.forEach((gi, k) => {
      const g = groups[gi];
      const waits = g.members.map((m) => ix.waitOfColl[m]);
      if (g.kind === 'all_gather') {
        own[waitUnit[gi]] = minOf(waits);
        const natural = minOf(g.members);
        const prev = k > 0 ? list[k - 1] : -1;
        own[startUnit[gi]] = prev >= 0 ? Math.min(natural, own[waitUnit[prev]] + 0.25) : natural;
      } else {
        own[startUnit[gi]] = maxOf(g.members);
      }
    });
    list.forEach((gi, k) => {
      const g = groups[gi];
      if (g.kind !== 'reduce_scatter') return;
      const next = k + 1 < list.length ? list[k + 1] : -1;
      if (next >= 0) own[waitUnit[gi]] = own[startUnit[next]] + 0.25;
      else {
        const consumers = g.members.flatMap((m) => {
          const w = ix.waitOfColl[m];
          return Array.from(ix.succIdx.subarray(ix.succOff[w], ix.succOff[w + 1]));
        });
        own[waitUnit[gi]] = consumers.length > 0 ? minOf(consumers) - 0.5 : own[startUnit[gi]] + 0.5;
      }
    });
    list.forEach((gi, k) => {
      const g = groups[gi];
      const what = g.members.length > 1 ? `one of ${g.members.length} ${g.kind}s merged into ${g.module}'s ${g.phase} bucket` : `the only ${g.kind} of ${g.module} in ${g.phase}, so it stays alone`;
      for (const m of g.members) {
        reasons.push({ node: nodes[m].name, code: 'block_bucket', text: `${what}: torchtitan's one bucket per transformer block.` });
        if (g.kind === 'all_gather' && k > 0) {
          reasons.push({ node: nodes[m].name, code: 'block_prefetch', text: `issued one block ahead, right after ${groups[list[k - 1]].module}'s all-gather wait, so it overlaps that block's compute.` });
        } else if (g.kind === 'reduce_scatter') {
          const next = k + 1 < list.length ? groups[list[k + 1]].module : undefined;
          reasons.push({ node: nodes[m].name, code: 'block_prefetch', text: next ? `issued after ${g.module}'s last gradient and waited one block later, after ${next}'s reduce-scatter is issued.` : `issued after ${g.module}'s last gradient and waited just before the optimizer.` });
        }
      }
    });
  }
  // ---- ancestors inherit earlier targets; then list-schedule ----
  const topo = kahn(indeg0, unitSuccs, firstIdx, firstIdx, firstIdx);
  const eff = Float64Array.from(own);
  for (let t = topo.length - 1; t >= 0; t--) {
    const u = topo[t];
    for (const s of unitSuccs[u]) if (eff[s] < eff[u]) eff[u] = eff[s];
  }
  if (topo.length < U) return null; // merged units form a cycle
  const order = kahn(indeg0, unitSuccs, eff, own, firstIdx);
  // ---- materialise ----
  const bucketIdOf = groups.map(() => -1);
  const plans: BucketPlan[] = [];
  const items: OrderItem[] = [];
  for (const u of order) {
    if (unitNode[u] >= 0) {
      items.push({ type: 'node', index: unitNode[u] });
      continue;
    }
    const gi = unitGroup[u];
    const g = groups[gi];
    const isStart = startUnit[gi] === u;
    if (g.members.length === 1) {
      items.push({ type: 'node', index: isStart ? g.members[0] : ix.waitOfColl[g.members[0]] });
      continue;
    }
    if (isStart) {
      bucketIdOf[gi] = plans.length;
      plans.push({ id: plans.length, members: g.members });
      items.push({ type: 'bucket_start', bucket: bucketIdOf[gi] });
    } else items.push({ type: 'bucket_wait', bucket: bucketIdOf[gi] });
  }
  return { items, plans, reasons };
}

/** Kahn's algorithm popping the ready unit with the smallest (k0, k1, k2); shorter than U on a cycle. */
function kahn(indeg0: Int32Array, succs: readonly number[][], k0: Float64Array, k1: Float64Array, k2: Float64Array): number[] {
  const edges = succs.flatMap((ss, from) => ss.map((to) => ({ from, to })));
  try {
    return kahnOrder(indeg0.length, edges, (u) => [k0[u], k1[u], k2[u], u]);
  } catch (e) {
    if (e instanceof GraphError) return [];
    throw e;
  }
}

export const transformerBlock: Backend<TransformerBlockOptions> = { name: 'transformer_block', run: runTransformerBlock };
