// The device mesh of a run, with torchtitan's names (ParallelDims in torchtitan/distributed/
// parallel_dims.py): data_parallel_replicate_degree × data_parallel_shard_degree ×
// tensor_parallel_degree ranks, laid out as torch's DeviceMesh lays out
// ["dp_replicate", "dp_shard", "tp"]: tp innermost (consecutive ranks), dp_replicate outermost.
// -1 for the shard degree means "the ranks the other degrees leave", as in torchtitan.

import { ConfigError } from '../errors';
import type { Mesh } from '../graph/mesh';

export { describeMesh, fsdpMesh, isOneDim, type Mesh } from '../graph/mesh';

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

export const PARALLELISM_DEFAULTS: Readonly<ParallelismConfig> = {
  data_parallel_shard_degree: -1,
  data_parallel_replicate_degree: 1,
  tensor_parallel_degree: 1,
  gpus_per_node: 8,
};

const F = 'parallelism';

/** The mesh on `ranks` ranks, or a ConfigError naming the field and the product it must reach. */
export function resolveMesh(ranks: number, p: Readonly<ParallelismConfig>): Mesh {
  const r = p.data_parallel_replicate_degree;
  const t = p.tensor_parallel_degree;
  const s = p.data_parallel_shard_degree;
  if (s === 0 || s < -1) {
    throw new ConfigError(
      `${F}.data_parallel_shard_degree`,
      `${F}.data_parallel_shard_degree must be -1 (the rest) or an integer ≥ 1, got ${s}`,
    );
  }
  if (s === -1) {
    if (ranks % (r * t) !== 0) {
      const f = `${F}.tensor_parallel_degree`;
      throw new ConfigError(
        f,
        `${f} · ${F}.data_parallel_replicate_degree must divide ranks (${ranks}) ` +
          `for ${F}.data_parallel_shard_degree -1 (the rest), got ${t} · ${r} = ${r * t}`,
      );
    }
    return { dpReplicate: r, dpShard: ranks / (r * t), tp: t };
  }
  if (r * s * t !== ranks) {
    const f = `${F}.data_parallel_shard_degree`;
    throw new ConfigError(
      f,
      `${f} · ${F}.data_parallel_replicate_degree · ${F}.tensor_parallel_degree must equal ranks (${ranks}), ` +
        `got ${s} · ${r} · ${t} = ${r * s * t} (or set ${f} -1: the rest)`,
    );
  }
  return { dpReplicate: r, dpShard: s, tp: t };
}
