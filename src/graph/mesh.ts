// A device mesh as torchtitan builds it (torchtitan/distributed/parallel_dims.py): dimensions
// ["dp_replicate", "dp_shard", "tp"], row-major, so tp is innermost (consecutive ranks), dp_shard
// strides by tp and dp_replicate by dp_shard · tp. Each dimension of size > 1 is a process group
// named after it; a 1-D FSDP mesh keeps SimpleFSDP's one group, 'dp' (docs/ARCHITECTURE.md §7).
// resolveMesh is the one place degrees become a mesh: the config's, the CLI's and a live run's.
// Expert parallel (torchtitan ParallelDims: the sparse mesh ["dp_replicate", "efsdp", "ep"]) lays
// the same ranks out a second way for the routed experts: ep innermost (consecutive ranks, borrowed
// from dp_shard · tp), and efsdp = dp_shard · tp / ep, the group the expert weights are FSDP-sharded
// over (torchtitan's earlier dp_shard_mod_ep; dp_shard_in_ep is the part of ep taken from dp_shard).

import { ConfigError } from '../errors';

export interface Mesh {
  readonly dpReplicate: number;
  readonly dpShard: number;
  readonly tp: number;
  /** Expert-parallel degree (torchtitan expert_parallel_degree); absent = 1. */
  readonly ep?: number;
}

/** The dense mesh's dimensions and the expert (sparse) mesh's two: 'ep' and 'efsdp'. */
export type MeshDim = 'dp_replicate' | 'dp_shard' | 'tp' | 'ep' | 'efsdp';

/** The mesh's dimensions in torchtitan's order, outermost first. */
export const MESH_DIMS: readonly MeshDim[] = ['dp_replicate', 'dp_shard', 'tp'];

export const epDegree = (m: Mesh): number => m.ep ?? 1;

/** The expert weights' FSDP degree: torchtitan's efsdp = dp_shard · cp · tp / ep (cp = 1 here). */
const efsdpDegree = (m: Mesh): number => (m.dpShard * m.tp) / epDegree(m);

/**
 * The group size the routed experts FSDP-shard over: efsdp under expert parallel; without it
 * dp_shard, the experts then being TP-split like dense weights (torchtitan moe_sharding.py
 * expert_param_placement_dense: DP and TP axes only).
 */
export const expertFsdpDegree = (m: Mesh): number => (epDegree(m) > 1 ? efsdpDegree(m) : m.dpShard);

/** SimpleFSDP's data-parallel group on a 1-D mesh (the name torchtitan's simple_fsdp gives it). */
export const DP_GROUP = 'dp';

export const fsdpMesh = (n: number): Mesh => ({ dpReplicate: 1, dpShard: n, tp: 1 });

/** A mesh's degrees as a run asks for them: `dpShard` -1 means the ranks the others leave (torchtitan's -1). */
export interface MeshDegrees {
  readonly dpReplicate: number;
  readonly dpShard: number;
  readonly tp: number;
  readonly ep?: number;
}

/** The names a caller's input gives each degree, for the errors: a config's fields, a CLI's flags. */
export type MeshFields = Readonly<Record<'dpReplicate' | 'dpShard' | 'tp', string>> & { readonly ep?: string };

/** torchtitan ParallelDims._validate: ep must divide the sparse region dp_shard · cp · tp. */
function withEp(m: Mesh, ep: number | undefined, f: MeshFields): Mesh {
  if (ep === undefined || ep === 1) return m;
  const field = f.ep ?? 'ep';
  if (!Number.isSafeInteger(ep) || ep < 1) throw new ConfigError(field, `${field} must be an integer ≥ 1, got ${ep}`);
  const region = m.dpShard * m.tp;
  if (region % ep !== 0) {
    throw new ConfigError(
      field,
      `${field} (${ep}) must divide ${f.dpShard} · ${f.tp} (${m.dpShard} · ${m.tp} = ${region}): expert parallel ` +
        'borrows its ranks from the FSDP and TP dimensions (torchtitan ParallelDims)',
    );
  }
  return { ...m, ep };
}

/** The mesh on `ranks` ranks, or a ConfigError naming the field and the product it must reach. */
export function resolveMesh(ranks: number, d: MeshDegrees, f: MeshFields): Mesh {
  return withEp(resolveDense(ranks, d, f), d.ep, f);
}

function resolveDense(ranks: number, d: MeshDegrees, f: MeshFields): Mesh {
  const { dpReplicate: r, dpShard: s, tp: t } = d;
  if (s === 0 || s < -1) {
    throw new ConfigError(f.dpShard, `${f.dpShard} must be -1 (the rest) or an integer ≥ 1, got ${s}`);
  }
  if (s === -1) {
    if (ranks % (r * t) !== 0) {
      throw new ConfigError(
        f.tp,
        `${f.tp} · ${f.dpReplicate} (${t} · ${r}) must divide ranks (${ranks}): ` +
          `${f.dpShard} -1 takes the rest of the ranks`,
      );
    }
    return { dpReplicate: r, dpShard: ranks / (r * t), tp: t };
  }
  if (r * s * t !== ranks) {
    throw new ConfigError(
      f.dpShard,
      `${f.dpShard} · ${f.dpReplicate} · ${f.tp} must equal ranks (${ranks}), ` +
        `got ${s} · ${r} · ${t} = ${r * s * t} (or set ${f.dpShard} -1: the rest)`,
    );
  }
  return { dpReplicate: r, dpShard: s, tp: t };
}

export const isOneDim = (m: Mesh): boolean => m.dpReplicate === 1 && m.tp === 1;

export const meshSize = (m: Mesh): number => m.dpReplicate * m.dpShard * m.tp;

/** One process group of the mesh: its name, size and the rank distance between its members. */
export interface MeshGroup {
  readonly group: string;
  readonly size: number;
  readonly stride: number;
}

export function meshGroup(m: Mesh, dim: MeshDim): MeshGroup {
  switch (dim) {
    case 'tp':
      return { group: 'tp', size: m.tp, stride: 1 };
    case 'dp_shard':
      return { group: isOneDim(m) ? DP_GROUP : 'dp_shard', size: m.dpShard, stride: m.tp };
    case 'dp_replicate':
      return { group: 'dp_replicate', size: m.dpReplicate, stride: m.dpShard * m.tp };
    case 'ep':
      return { group: 'ep', size: epDegree(m), stride: 1 };
    case 'efsdp':
      // without expert parallel the experts shard with the dense weights, on their group
      return epDegree(m) === 1
        ? meshGroup(m, 'dp_shard')
        : { group: 'efsdp', size: efsdpDegree(m), stride: epDegree(m) };
  }
}

/** "FSDP 8 × TP 8", "HSDP 2 × 32", "FSDP 64", "FSDP 8 × EP 2": how tables name a mesh. */
export function describeMesh(m: Mesh): string {
  const dp = m.dpReplicate > 1 ? `HSDP ${m.dpReplicate} × ${m.dpShard}` : `FSDP ${m.dpShard}`;
  const dense = m.tp > 1 ? `${dp} × TP ${m.tp}` : dp;
  return epDegree(m) > 1 ? `${dense} × EP ${epDegree(m)}` : dense;
}

/** Launches per kind; `all_to_all` only where a group has one (a dense run's counts keep their shape). */
export type GroupCounts = { all_gather: number; reduce_scatter: number; all_reduce: number; all_to_all?: number };

/**
 * Collectives a schedule launches per process group and kind (a bucket counts once), groups in
 * first-launch order: what compare reports for a mesh.
 */
export function collectivesByGroup(
  nodes: readonly {
    readonly kind: string;
    readonly collective?: { readonly kind: keyof GroupCounts; readonly group: string };
  }[],
): Record<string, GroupCounts> {
  const out: Record<string, GroupCounts> = {};
  for (const n of nodes) {
    const c = n.collective;
    if (c === undefined || n.kind === 'wait') continue;
    const counts = (out[c.group] ??= { all_gather: 0, reduce_scatter: 0, all_reduce: 0 });
    counts[c.kind] = (counts[c.kind] ?? 0) + 1;
  }
  return out;
}

/** Per-kind launches summed over groups (compare's `collectivesTotal`). */
export function sumGroupCounts(counts: readonly GroupCounts[]): GroupCounts {
  const total: GroupCounts = { all_gather: 0, reduce_scatter: 0, all_reduce: 0 };
  for (const c of counts) {
    total.all_gather += c.all_gather;
    total.reduce_scatter += c.reduce_scatter;
    total.all_reduce += c.all_reduce;
    if (c.all_to_all !== undefined) total.all_to_all = (total.all_to_all ?? 0) + c.all_to_all;
  }
  return total;
}
