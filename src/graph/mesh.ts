// A device mesh as torchtitan builds it (torchtitan/distributed/parallel_dims.py): dimensions
// ["dp_replicate", "dp_shard", "tp"], row-major, so tp is innermost (consecutive ranks), dp_shard
// strides by tp and dp_replicate by dp_shard · tp. Each dimension of size > 1 is a process group
// named after it; a 1-D FSDP mesh keeps SimpleFSDP's one group, 'dp' (docs/ARCHITECTURE.md §7).
// resolveMesh is the one place degrees become a mesh: the config's, the CLI's and a live run's.

import { ConfigError } from '../errors';

export interface Mesh {
  readonly dpReplicate: number;
  readonly dpShard: number;
  readonly tp: number;
}

export type MeshDim = 'dp_replicate' | 'dp_shard' | 'tp';

/** The mesh's dimensions in torchtitan's order, outermost first. */
export const MESH_DIMS: readonly MeshDim[] = ['dp_replicate', 'dp_shard', 'tp'];

/** SimpleFSDP's data-parallel group on a 1-D mesh (the name torchtitan's simple_fsdp gives it). */
export const DP_GROUP = 'dp';

export const fsdpMesh = (n: number): Mesh => ({ dpReplicate: 1, dpShard: n, tp: 1 });

/** A mesh's degrees as a run asks for them: `dpShard` -1 means the ranks the others leave (torchtitan's -1). */
export interface MeshDegrees {
  readonly dpReplicate: number;
  readonly dpShard: number;
  readonly tp: number;
}

/** The names a caller's input gives each degree, for the errors: a config's fields, a CLI's flags. */
export type MeshFields = Readonly<Record<keyof MeshDegrees, string>>;

/** The mesh on `ranks` ranks, or a ConfigError naming the field and the product it must reach. */
export function resolveMesh(ranks: number, d: MeshDegrees, f: MeshFields): Mesh {
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
  }
}

/** "FSDP 8 × TP 8", "HSDP 2 × 32", "FSDP 64": how tables name a mesh. */
export function describeMesh(m: Mesh): string {
  const dp = m.dpReplicate > 1 ? `HSDP ${m.dpReplicate} × ${m.dpShard}` : `FSDP ${m.dpShard}`;
  return m.tp > 1 ? `${dp} × TP ${m.tp}` : dp;
}

export type GroupCounts = { all_gather: number; reduce_scatter: number; all_reduce: number };

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
    (out[c.group] ??= { all_gather: 0, reduce_scatter: 0, all_reduce: 0 })[c.kind]++;
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
  }
  return total;
}
