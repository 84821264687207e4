// The process group of an imported collective and the shapes it must have. A 1-D dump's
// collectives run on SimpleFSDP's one group of world_size ranks; a 2-D dump names each one's
// group (`mesh_dim`, `group_size`): a dp_shard all-gather gathers dp_shard ranks, not the world,
// and the tp group's members are consecutive ranks while dp_shard's stride by tp (mesh.ts).

import { preview } from '../errors';
import type { FxMesh, FxNode } from './fx_schema';
import { DP_GROUP, MESH_DIMS, meshGroup, type MeshDim } from './mesh';
import type { CollectiveKind } from './types';

const j = (v: unknown): string => preview(v);

export interface FxGroup {
  readonly group: string;
  readonly groupSize: number;
  readonly groupStride?: number;
}

const isMeshDim = (s: string): s is MeshDim => (MESH_DIMS as readonly string[]).includes(s);

/** The group a collective runs on; `bad` names the field that contradicts the dump's mesh or world size. */
export function collectiveGroup(
  fx: FxNode,
  mesh: FxMesh | undefined,
  worldSize: number,
  bad: (field: string, why: string) => never,
): FxGroup {
  const name = fx.group;
  const dim = mesh && name !== undefined && isMeshDim(name) ? meshGroup(mesh, name) : undefined;
  const size = fx.groupSize ?? dim?.size ?? worldSize;
  if (size > worldSize || worldSize % size !== 0)
    bad('group_size', `${size} must divide world_size ${worldSize} (a group is a slice of the mesh)`);
  if (dim) {
    if (dim.size !== size) bad('group_size', `${size} differs from the mesh's '${name}' size ${dim.size}`);
    return { group: dim.group, groupSize: size, ...(dim.stride > 1 ? { groupStride: dim.stride } : {}) };
  }
  if (name === undefined) return { group: size === worldSize ? DP_GROUP : `group_of_${size}`, groupSize: size };
  return { group: name, groupSize: size };
}

/**
 * Checks the result shape against the input: an all-gather stacks `size` shards on dim 0, a
 * reduce-scatter splits dim 0 in `size`, an all-reduce keeps the shape, an all_to_all_single keeps
 * every dim but 0 (its split sizes set how many rows go out and come back).
 */
export function checkCollectiveShape(
  kind: CollectiveKind,
  input: readonly number[],
  out: readonly number[],
  size: number,
  bad: (field: string, why: string) => never,
): void {
  if (kind === 'all_reduce') {
    if (j(out) !== j(input)) bad('shape', `${j(out)} differs from its input's ${j(input)} (an all_reduce keeps it)`);
    return;
  }
  if (kind === 'all_to_all') {
    if (out.length !== input.length || out.length === 0 || out.some((v, k) => k > 0 && v !== input[k]))
      bad('shape', `${j(out)} does not fit an all_to_all_single of ${j(input)} (every dim but 0 kept)`);
    return;
  }
  const [from, to] = kind === 'all_gather' ? [input, out] : [out, input]; // shard, full
  const ok =
    from.length === to.length &&
    from.length > 0 &&
    to[0] === from[0] * size &&
    from.every((v, k) => k === 0 || v === to[k]);
  if (!ok) bad('shape', `${j(out)} does not fit a ${kind} of ${j(input)} on ${size} ranks (dim 0 × group size)`);
}
