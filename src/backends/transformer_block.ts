// transformer_block: torchtitan's transformer_block_bucketing pass, which is torch's manual
// overlap scheduler (torch/_inductor/fx_passes/overlap_manual_scheduling.py, ManualOverlapScheduler,
// torch 2.15) driven by torchtitan's module bucket plan [tok_embeddings, layers.0 … layers.N-1,
// [norm, output]] (graph_trainer get_default_transformer_block_buckets). In jit mode torch runs it
// on the forward and the backward graph apart; in aot_fx_trace mode (meta.jointGraph) torchtitan's
// JointManualOverlapScheduler runs it once on the joint graph, bucketing each plan entry's forward
// and backward collectives apart and packing each bucket in FSDP2's parameter order
// (experiments/graph_trainer/fsdp_passes.py). The port is backends/manual/, checked decision for
// decision against torch's own pass (test/unit/backends/torch_manual.test.ts); this file turns a
// step graph into its input and its result into a Schedule. Optimizer nodes are not in torch's
// graphs: they keep their place after the backward.

import type { CostModel } from '../estimate';
import type { GraphNode, StepGraph } from '../graph';
import { indexGraph, type GraphIndex } from './graph_index';
import { resolveOptions } from './knob_specs';
import {
  blockCount,
  defaultModulePlan,
  fsdpParamModuleOrder,
  manualGraphOf,
  manualOverlapSchedule,
  manualReasons,
  manualRegions,
  type ManualGraph,
  type ManualOptions,
  type ManualRegion,
  type ManualResult,
} from './manual';
import { rewriteGraph, type BucketPlan, type OrderItem } from './rewrite';
import type { Backend, Reason, Schedule } from './schedule_types';

export type TransformerBlockOptions = Record<string, never>;

/** torchtitan's module of a node as fsdp2_eager names it: 'layers.N', 'tok_embeddings' or 'norm+output'. */
export function moduleOf(node: Pick<GraphNode, 'layer' | 'params' | 'name'>): string {
  if (node.layer !== undefined) return `layers.${node.layer}`;
  const fqn = node.params?.[0] ?? node.name;
  const top = fqn.split('.')[0];
  if (top === 'norm' || top === 'output') return 'norm+output';
  return top;
}

export function runTransformerBlock(
  graph: StepGraph,
  _cost: CostModel,
  options?: Partial<TransformerBlockOptions>,
): Schedule {
  const opts = resolveOptions('transformer_block', {}, {}, options as Record<string, unknown> | undefined);
  const ix = indexGraph(graph);
  const plan = defaultModulePlan(blockCount(graph));
  // aot_fx_trace hands torchtitan one joint graph; jit, a forward and a backward graph
  const manual: ManualOptions =
    graph.meta.jointGraph === true
      ? { mode: 'joint', plan, paramModuleOrder: fsdpParamModuleOrder(graph.params) }
      : { mode: 'jit', plan };
  const out = new Output(ix);
  const reasons: Reason[] = [];
  for (const region of manualRegions(ix)) {
    const g = manualGraphOf(ix, region);
    const result = manualOverlapSchedule(g, manual);
    out.add(region, g, result);
    reasons.push(...manualReasons(g, result, plan, region.phase));
  }
  out.addRest();
  const { graph: rewritten, buckets } = rewriteGraph(ix, out.items, out.plans);
  return { backend: 'transformer_block', graph: rewritten, buckets, reasons, options: opts };
}

/** The schedule's order, region by region: torch's order, buckets merged, folded casts before their bucket. */
class Output {
  readonly items: OrderItem[] = [];
  readonly plans: BucketPlan[] = [];
  private readonly placed: Uint8Array;

  constructor(private readonly ix: GraphIndex) {
    this.placed = new Uint8Array(ix.n);
  }

  add(region: ManualRegion, g: ManualGraph, r: ManualResult): void {
    const global = (k: number) => region.nodes[k];
    const bucketOf = new Map(
      r.buckets.flatMap(
        (b) =>
          [
            [b.start, b],
            [b.wait, b],
          ] as const,
      ),
    );
    const planOf = new Map<number, number>();
    for (const id of r.order) {
      if (id < g.n) {
        this.node(global(id));
        continue;
      }
      const b = bucketOf.get(id)!;
      const isStart = b.start === id;
      if (isStart) for (const c of r.foldedCasts.get(id) ?? []) this.node(global(c));
      if (b.members.length === 1) {
        this.node(global(isStart ? b.members[0] : g.waitOf[b.members[0]]));
      } else if (isStart) {
        for (const m of b.members) this.placed[global(m)] = 1;
        planOf.set(b.start, this.plans.length);
        this.plans.push({ id: this.plans.length, members: b.members.map(global) });
        this.items.push({ type: 'bucket_start', bucket: planOf.get(b.start)! });
      } else {
        for (const m of b.members) this.placed[global(g.waitOf[m])] = 1;
        this.items.push({ type: 'bucket_wait', bucket: planOf.get(b.start)! });
      }
    }
  }

  /** The nodes no pass graph holds (the optimizer), in program order. */
  addRest(): void {
    for (let i = 0; i < this.ix.n; i++) if (this.placed[i] === 0) this.node(i);
  }

  private node(i: number): void {
    this.placed[i] = 1;
    this.items.push({ type: 'node', index: i });
  }
}

export const transformerBlock: Backend<TransformerBlockOptions> = {
  name: 'transformer_block',
  run: runTransformerBlock,
};
