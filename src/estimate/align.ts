// Cross-rank alignment of runtime estimates: every rank contributes its estimate of every node and
// all take the median, so the backends make the same decisions on every rank. Mirrors torch's
// config_comms.runtime_estimations_align_across_all_distributed_ranks (estimates all-gathered,
// torch.median taken — the lower middle value for an even rank count).

import { ConfigError } from '../errors';
import type { CollectiveKind, DType, GraphNode, StepGraph } from '../graph';
import { lowerMedianInPlace } from '../util';
import type { CostModel } from './cost_types';

/** torch.median over the ranks' estimates (`scratch`: one slot per model, reused). */
function medianOver(models: readonly CostModel[], f: (m: CostModel) => number, scratch: Float64Array): number {
  for (let i = 0; i < models.length; i++) scratch[i] = f(models[i]);
  return lowerMedianInPlace(scratch);
}

export function alignCostModels(models: readonly CostModel[], graph: StepGraph): CostModel {
  if (models.length === 0) throw new ConfigError('models', 'alignCostModels needs at least one cost model, got 0');
  const computeByName = new Map<string, number>();
  const scratch = new Float64Array(models.length);
  // torch aligns the estimates of the graph's nodes up front; other nodes (a backend's new bucket
  // nodes) are aligned on first use, with the same rule
  for (const node of graph.nodes)
    computeByName.set(
      node.name,
      medianOver(models, (m) => m.computeUs(node), scratch),
    );
  const collCache = new Map<string, number>();
  return {
    label: `median of ${models.length} ranks: ${models[0].label}`,
    ...(models[0].overlapSlowdown !== undefined ? { overlapSlowdown: models[0].overlapSlowdown } : {}),
    computeUs(node: GraphNode): number {
      let t = computeByName.get(node.name);
      if (t === undefined) {
        t = medianOver(models, (m) => m.computeUs(node), scratch);
        computeByName.set(node.name, t);
      }
      return t;
    },
    collectiveUs(kind: CollectiveKind, bytes: number, groupSize: number, dtype: DType, groupStride = 1): number {
      const key = `${kind}|${bytes}|${groupSize}|${dtype}|${groupStride}`;
      let t = collCache.get(key);
      if (t === undefined) {
        t = medianOver(models, (m) => m.collectiveUs(kind, bytes, groupSize, dtype, groupStride), scratch);
        collCache.set(key, t);
      }
      return t;
    },
  };
}
