// The device mesh of a run, with torchtitan's names (ParallelDims in torchtitan/distributed/
// parallel_dims.py): data_parallel_replicate_degree × data_parallel_shard_degree ×
// tensor_parallel_degree ranks, laid out as torch's DeviceMesh lays out
// ["dp_replicate", "dp_shard", "tp"]: tp innermost (consecutive ranks), dp_replicate outermost.
// -1 for the shard degree means "the ranks the other degrees leave", as in torchtitan. The
// arithmetic is graph/mesh.ts resolveMesh's, the one resolver (docs/ARCHITECTURE.md §4).

import { ConfigError } from '../errors';
import { resolveMesh as resolveDegrees, type Mesh, type MeshFields } from '../graph';
import type { ModelArgs } from '../model';

export { describeMesh, type Mesh } from '../graph';

export interface ParallelismConfig {
  /** FSDP degree (dp_shard); -1 = ranks / (replicate · tp). */
  data_parallel_shard_degree: number;
  /** HSDP replicas (dp_replicate); 1 = plain FSDP. */
  data_parallel_replicate_degree: number;
  /** Tensor-parallel degree (tp), with sequence parallel as torchtitan's Llama plan. */
  tensor_parallel_degree: number;
  /** GPUs per node: a group inside one node uses the intra-node link, one spanning nodes the inter-node one. */
  gpus_per_node: number;
  /** Expert-parallel degree (ep): ranks the routed experts are split across; must divide dp_shard · tp. */
  expert_parallel_degree: number;
}

const FIELDS: MeshFields = {
  dpReplicate: 'parallelism.data_parallel_replicate_degree',
  dpShard: 'parallelism.data_parallel_shard_degree',
  tp: 'parallelism.tensor_parallel_degree',
  ep: 'parallelism.expert_parallel_degree',
};

/** The mesh of the config's parallelism on `ranks` ranks; errors name the config's fields. */
export function meshOfParallelism(ranks: number, p: Readonly<ParallelismConfig>): Mesh {
  const degrees = { dpReplicate: p.data_parallel_replicate_degree, dpShard: p.data_parallel_shard_degree };
  return resolveDegrees(ranks, { ...degrees, tp: p.tensor_parallel_degree, ep: p.expert_parallel_degree }, FIELDS);
}

/**
 * An expert-parallel degree needs an MoE model whose experts it divides (each ep rank
 * holds numExperts / ep of them), as torchtitan's MoE sharding does; undefined when it fits.
 */
export function expertParallelError(args: ModelArgs, p: Readonly<ParallelismConfig>): ConfigError | undefined {
  const ep = p.expert_parallel_degree;
  if (ep === 1) return undefined;
  const field = FIELDS.ep ?? 'ep';
  if (args.moe === undefined) return new ConfigError(field, `${field} (${ep}) needs an MoE model; this one is dense`);
  if (args.moe.numExperts % ep === 0) return undefined;
  return new ConfigError(field, `${field} (${ep}) must divide the model's ${args.moe.numExperts} routed experts`);
}
