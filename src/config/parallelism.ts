// The device mesh of a run, with torchtitan's names (ParallelDims in torchtitan/distributed/
// parallel_dims.py): data_parallel_replicate_degree × data_parallel_shard_degree ×
// tensor_parallel_degree ranks, laid out as torch's DeviceMesh lays out
// ["dp_replicate", "dp_shard", "tp"]: tp innermost (consecutive ranks), dp_replicate outermost.
// -1 for the shard degree means "the ranks the other degrees leave", as in torchtitan. The
// arithmetic is graph/mesh.ts resolveMesh's, the one resolver (docs/ARCHITECTURE.md §4).

import { resolveMesh as resolveDegrees, type Mesh, type MeshFields } from '../graph';

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
}

const FIELDS: MeshFields = {
  dpReplicate: 'parallelism.data_parallel_replicate_degree',
  dpShard: 'parallelism.data_parallel_shard_degree',
  tp: 'parallelism.tensor_parallel_degree',
};

/** The mesh of the config's parallelism on `ranks` ranks; errors name the config's fields. */
export function meshOfParallelism(ranks: number, p: Readonly<ParallelismConfig>): Mesh {
  const degrees = { dpReplicate: p.data_parallel_replicate_degree, dpShard: p.data_parallel_shard_degree };
  return resolveDegrees(ranks, { ...degrees, tp: p.tensor_parallel_degree }, FIELDS);
}
