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

import type { CostModel } from '../estimate';
import type { CollectiveKind, GraphNode, StepGraph } from '../graph';
import { indexGraph, type GraphIndex } from './graph_index';
import { GraphError, kahnOrder } from '../graph';
import { resolveOptions } from './knob_specs';
import { bucketKey, rewriteGraph, type BucketPlan, type OrderItem } from './rewrite';
import type { Backend, Reason, ReasonDetail, Schedule } from './schedule_types';

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

export function runTransformerBlock(
  graph: StepGraph, _cost: CostModel, options?: Partial<TransformerBlockOptions>,
): Schedule {
  const opts = resolveOptions('transformer_block', {}, {}, options as Record<string, unknown> | undefined);
  const ix = indexGraph(graph);
  // merging a module's collectives can only create a cycle on hand-made graphs where one member
  // depends on another; then every collective keeps its own start and wait
  const planned = plan(ix, false) ?? plan(ix, true)!;
  const { graph: out, buckets } = rewriteGraph(ix, planned.items, planned.plans);
  return { backend: 'transformer_block', graph: out, buckets, reasons: planned.reasons, options: opts };
}

type Plan = { items: OrderItem[]; plans: BucketPlan[]; reasons: Reason[] };

function plan(ix: GraphIndex, split: boolean): Plan | null {
  const grouping = groupCollectives(ix, split);
  const units = buildUnits(ix, grouping);
  const edges = unitEdges(ix, units);
  const { own, reasons } = targets(ix, grouping.groups, units, edges.firstIdx);
  const order = listSchedule(edges, own);
  if (order === null) return null; // merged units form a cycle
  return { ...materialise(ix, grouping.groups, units, order), reasons };
}

/** Parameter collectives grouped by (kind, phase, module, bucket key); `groupOf`: each start and wait → its group. */
function groupCollectives(ix: GraphIndex, split: boolean): { groups: Group[]; groupOf: Int32Array } {
  const groups: Group[] = [];
  const groupIds = new Map<string, number>();
  const groupOf = new Int32Array(ix.n).fill(-1);
  for (let i = 0; i < ix.n; i++) {
    if (ix.waitOfColl[i] < 0) continue;
    const node = ix.nodes[i];
    if (node.params === undefined) continue; // an activation collective: a plain unit, in place
    const kind = node.collective!.kind;
    const id = `${kind}|${node.phase}|${moduleOf(node)}|${bucketKey(node)}${split ? `|${i}` : ''}`;
    let g = groupIds.get(id);
    if (g === undefined) {
      const group = { members: [], module: moduleOf(node), kind, phase: node.phase, commGroup: node.collective!.group };
      g = groups.push(group) - 1;
      groupIds.set(id, g);
    }
    groups[g].members.push(i);
    groupOf[i] = g;
    groupOf[ix.waitOfColl[i]] = g;
  }
  return { groups, groupOf };
}

/** Scheduling units: every other node is one; a group's starts are one unit, its waits another. */
interface Units {
  readonly unitOf: Int32Array; // node → unit
  readonly unitNode: readonly number[]; // node number of a plain unit, -1 for a group unit
  readonly unitGroup: readonly number[]; // group of a group unit, -1 for a plain one
  readonly startUnit: readonly number[]; // group → its start unit
  readonly waitUnit: readonly number[]; // group → its wait unit
}

function buildUnits(ix: GraphIndex, { groups, groupOf }: { groups: Group[]; groupOf: Int32Array }): Units {
  const unitOf = new Int32Array(ix.n);
  const unitNode: number[] = [];
  const unitGroup: number[] = [];
  const startUnit = groups.map(() => -1);
  const waitUnit = groups.map(() => -1);
  for (let i = 0; i < ix.n; i++) {
    const g = groupOf[i];
    if (g < 0) {
      unitOf[i] = unitNode.push(i) - 1;
      unitGroup.push(-1);
      continue;
    }
    const table = ix.waitOfColl[i] >= 0 ? startUnit : waitUnit;
    if (table[g] < 0) {
      table[g] = unitNode.push(-1) - 1;
      unitGroup.push(g);
    }
    unitOf[i] = table[g];
  }
  return { unitOf, unitNode, unitGroup, startUnit, waitUnit };
}

/** The unit graph: deduplicated edges, in-degrees, and each unit's first node number. */
interface UnitEdges {
  readonly succs: number[][];
  readonly indeg0: Int32Array;
  readonly firstIdx: Float64Array;
}

function unitEdges(ix: GraphIndex, { unitOf, unitNode }: Units): UnitEdges {
  const U = unitNode.length;
  const succs: number[][] = Array.from({ length: U }, () => []);
  const indeg0 = new Int32Array(U);
  const firstIdx = new Float64Array(U).fill(Infinity);
  const lastPredOf = new Int32Array(U).fill(-1); // dedupe: last unit that added an edge into p
  const seenPair = new Map<number, Set<number>>(); // group units only: many members share preds
  for (let i = 0; i < ix.n; i++) {
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
      succs[p].push(u);
      indeg0[u]++;
    }
  }
  return { succs, indeg0, firstIdx };
}

const minOf = (xs: number[]) => xs.reduce((a, b) => Math.min(a, b), Infinity);
const maxOf = (xs: number[]) => xs.reduce((a, b) => Math.max(a, b), -Infinity);

/**
 * Target positions: a unit's first node, except that each all-gather bucket starts right after the
 * previous bucket's wait (one block ahead) and waits at its first member's wait, and each
 * reduce-scatter bucket starts after its last gradient and waits after the next bucket starts.
 */
function targets(
  ix: GraphIndex, groups: Group[], units: Units, firstIdx: Float64Array,
): { own: Float64Array; reasons: Reason[] } {
  const own = Float64Array.from(firstIdx);
  const reasons: Reason[] = [];
  for (const list of chainsOf(groups)) {
    for (const [k, gi] of list.entries()) {
      if (groups[gi].kind === 'all_gather') allGatherTarget(ix, groups, units, own, list, k);
      else own[units.startUnit[gi]] = maxOf(groups[gi].members);
    }
    for (const [k, gi] of list.entries()) {
      if (groups[gi].kind === 'reduce_scatter') reduceScatterWaitTarget(ix, groups[gi], units, own, list, k);
    }
    reasons.push(...chainReasons(ix, groups, list));
  }
  return { own, reasons };
}

/** Groups chained per (kind, phase, process group), each chain in program order. */
function chainsOf(groups: Group[]): number[][] {
  const byPhaseKind = new Map<string, number[]>();
  groups.forEach((g, gi) => {
    const k = `${g.kind}|${g.phase}|${g.commGroup}`;
    const list = byPhaseKind.get(k);
    if (list) list.push(gi);
    else byPhaseKind.set(k, [gi]);
  });
  const chains = [...byPhaseKind.values()];
  for (const list of chains) list.sort((a, b) => groups[a].members[0] - groups[b].members[0]);
  return chains;
}

function allGatherTarget(
  ix: GraphIndex, groups: Group[], units: Units, own: Float64Array, list: number[], k: number,
): void {
  const gi = list[k];
  const g = groups[gi];
  own[units.waitUnit[gi]] = minOf(g.members.map((m) => ix.waitOfColl[m]));
  const natural = minOf(g.members);
  const prev = k > 0 ? list[k - 1] : -1;
  own[units.startUnit[gi]] = prev >= 0 ? Math.min(natural, own[units.waitUnit[prev]] + 0.25) : natural;
}

function reduceScatterWaitTarget(
  ix: GraphIndex, g: Group, units: Units, own: Float64Array, list: number[], k: number,
): void {
  const gi = list[k];
  const next = k + 1 < list.length ? list[k + 1] : -1;
  if (next >= 0) {
    own[units.waitUnit[gi]] = own[units.startUnit[next]] + 0.25;
    return;
  }
  const consumers = g.members.flatMap((m) => {
    const w = ix.waitOfColl[m];
    return Array.from(ix.succIdx.subarray(ix.succOff[w], ix.succOff[w + 1]));
  });
  own[units.waitUnit[gi]] = consumers.length > 0 ? minOf(consumers) - 0.5 : own[units.startUnit[gi]] + 0.5;
}

/** Why each member of a chain's groups was bucketed and moved (src/words/ words it as torchtitan would). */
function chainReasons(ix: GraphIndex, groups: Group[], list: number[]): Reason[] {
  const out: Reason[] = [];
  list.forEach((gi, k) => {
    const g = groups[gi];
    const bucket: ReasonDetail = {
      kind: 'block_bucket', coll: g.kind, members: g.members.length, module: g.module, phase: g.phase,
    };
    const prefetch = prefetchDetail(groups, list, k);
    for (const m of g.members) {
      out.push({ node: ix.nodes[m].name, code: 'block_bucket', detail: bucket });
      if (prefetch !== undefined) out.push({ node: ix.nodes[m].name, code: 'block_prefetch', detail: prefetch });
    }
  });
  return out;
}

/** Where the k-th group of a chain was moved to; undefined for the first all-gather (it stays). */
function prefetchDetail(groups: Group[], list: number[], k: number): ReasonDetail | undefined {
  const g = groups[list[k]];
  if (g.kind === 'all_gather') {
    if (k === 0) return undefined;
    return { kind: 'block_prefetch_all_gather', after: groups[list[k - 1]].module };
  }
  if (g.kind !== 'reduce_scatter') return undefined;
  const next = k + 1 < list.length ? groups[list[k + 1]].module : null;
  return { kind: 'block_prefetch_reduce_scatter', module: g.module, next };
}

/** Ancestors inherit their descendants' earlier targets; then Kahn by (target, own, first node); null on a cycle. */
function listSchedule({ succs, indeg0, firstIdx }: UnitEdges, own: Float64Array): number[] | null {
  const topo = kahn(indeg0, succs, firstIdx, firstIdx, firstIdx);
  if (topo.length < indeg0.length) return null;
  const eff = Float64Array.from(own);
  for (let t = topo.length - 1; t >= 0; t--) {
    const u = topo[t];
    for (const s of succs[u]) if (eff[s] < eff[u]) eff[u] = eff[s];
  }
  return kahn(indeg0, succs, eff, own, firstIdx);
}

/** The order as rewrite items: plain nodes, single-member groups as their own nodes, buckets merged. */
function materialise(
  ix: GraphIndex, groups: Group[], units: Units, order: number[],
): { items: OrderItem[]; plans: BucketPlan[] } {
  const bucketIdOf = groups.map(() => -1);
  const plans: BucketPlan[] = [];
  const items: OrderItem[] = [];
  for (const u of order) {
    if (units.unitNode[u] >= 0) {
      items.push({ type: 'node', index: units.unitNode[u] });
      continue;
    }
    const gi = units.unitGroup[u];
    const g = groups[gi];
    const isStart = units.startUnit[gi] === u;
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
  return { items, plans };
}

/** Kahn's algorithm popping the ready unit with the smallest (k0, k1, k2); shorter than U on a cycle. */
function kahn(
  indeg0: Int32Array, succs: readonly number[][], k0: Float64Array, k1: Float64Array, k2: Float64Array,
): number[] {
  const edges = succs.flatMap((ss, from) => ss.map((to) => ({ from, to })));
  try {
    return kahnOrder(indeg0.length, edges, (u) => [k0[u], k1[u], k2[u], u]);
  } catch (e) {
    if (e instanceof GraphError) return [];
    throw e;
  }
}

export const transformerBlock: Backend<TransformerBlockOptions> = {
  name: 'transformer_block',
  run: runTransformerBlock,
};
