// The meshes every schedule-invariant test runs on (issue 11): a 1-D FSDP mesh, a 2-D FSDP × TP
// mesh and a 3-D HSDP × TP mesh, all on 8 ranks (the smallest world with a real 3-D mesh), and
// which ranks share a process group there, for invariants that hold per group instance.

import { fsdpMesh, isOneDim, meshGroup, type Mesh, type MeshDim } from '../../src/graph';
import type { MeshGroup } from '../../src/graph/mesh';
import { groupInstance } from '../../src/sim';

export const MESH_RANKS = 8;

/** [name, mesh] rows for describe.each / it.each. */
export const INVARIANT_MESHES: readonly (readonly [string, Mesh])[] = [
  ['FSDP 8', fsdpMesh(MESH_RANKS)],
  ['FSDP 4 × TP 2', { dpReplicate: 1, dpShard: 4, tp: 2 }],
  ['HSDP 2 × 2 × TP 2', { dpReplicate: 2, dpShard: 2, tp: 2 }],
];

/** The mesh's process groups by name (a 1-D mesh: SimpleFSDP's one group, 'dp'). */
export function meshGroups(mesh: Mesh): Map<string, MeshGroup> {
  const dims: MeshDim[] = isOneDim(mesh) ? ['dp_shard'] : ['dp_replicate', 'dp_shard', 'tp'];
  const groups = dims.map((d) => meshGroup(mesh, d)).filter((g) => g.size > 1 || isOneDim(mesh));
  return new Map(groups.map((g) => [g.group, g]));
}

/** The first rank of `rank`'s instance of `group`: ranks with the same value share that group's collectives. */
export function groupInstanceOf(mesh: Mesh, group: string, rank: number, worldSize: number): number {
  const g = meshGroups(mesh).get(group);
  if (g === undefined) throw new Error(`no process group '${group}' on mesh ${JSON.stringify(mesh)}`);
  return groupInstance(rank, g.size, worldSize, g.stride).key;
}
