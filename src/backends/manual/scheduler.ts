// torch's manual_overlap_bucketing (ManualOverlapScheduler.run: bucket each plan scope, then
// reorder) for one FX graph, and torchtitan's JointManualOverlapScheduler on a joint graph: each
// scope's forward and backward collectives are bucketed apart, each bucket packed in FSDP2's
// parameter order. A pure function from a ManualGraph to the final order and buckets.

import { ConfigError } from '../../errors';
import { bucketScope, type BucketerState } from './bucketer';
import { ItemGraph } from './item_graph';
import { type ManualGraph, type ManualOptions, type ManualResult, scopeIndex, scopeNodes } from './manual_graph';
import { moveOverlapNodes, overlapDeps } from './reorder';

/** Runs the manual overlap scheduler; throws if two plan entries share a node (torch asserts the same). */
export function manualOverlapSchedule(g: ManualGraph, options: ManualOptions): ManualResult {
  const items = new ItemGraph(g);
  const st: BucketerState = { items, buckets: [], foldedCasts: new Map() };
  const byPath = scopeIndex(g);
  const scopes = options.plan.map((entry) => scopeNodes(byPath, entry));
  const inScope = disjointScopes(g, scopes);
  scopes.forEach((scope, entry) => {
    if (options.mode === 'jit') return bucketScope(st, { scope, entry, backward: false });
    const packing = options.paramModuleOrder;
    const fwd = scope.filter((i) => g.backward[i] === 0);
    const bwd = scope.filter((i) => g.backward[i] === 1);
    if (fwd.length > 0) bucketScope(st, { scope: fwd, entry, backward: false, packing });
    if (bwd.length > 0) bucketScope(st, { scope: bwd, entry, backward: true, packing });
  });
  const deps = overlapDeps(items, st.buckets, options.mode, inScope);
  moveOverlapNodes(items, deps, st.buckets);
  return { order: items.list.toArray(), buckets: st.buckets, foldedCasts: st.foldedCasts, deps };
}

function disjointScopes(g: ManualGraph, scopes: readonly number[][]): Uint8Array {
  const inScope = new Uint8Array(g.n);
  for (const scope of scopes) {
    for (const i of scope) {
      if (inScope[i] === 1) {
        const why = `node '${g.names[i]}' is in two entries of the module bucket plan (they must be disjoint)`;
        throw new ConfigError('module_bucket_plans', why);
      }
      inScope[i] = 1;
    }
  }
  return inScope;
}
