// Where a live rank sits in the device mesh, and what that means for its data: which process-group
// instance it joins per mesh dimension (torchtitan's row-major ["dp_replicate", "dp_shard", "tp"]
// layout, graph/mesh.ts), which rows of the global batch it trains on (ranks of one tp group share
// them), and which slice of each full parameter it holds (the TP plan's split, then FSDP's dim-0
// shard of that local slice). The 1-D mesh is the special case tp = dp_replicate = 1.

import { FsdpSimError } from '../errors';
import { MESH_DIMS, epDegree, fsdpMesh, isOneDim, meshGroup, meshSize, type Mesh, type MeshDim } from '../graph';
import { EXPERT_WEIGHTS } from '../model';
import { groupInstance } from '../sim';
import type { GraphMeta, ParamInfo } from '../graph';

/** The graph's mesh (a graph without one is FSDP on every rank). */
export const meshOfGraph = (meta: GraphMeta): Mesh => meta.mesh ?? fsdpMesh(meta.worldSize);

/** One FSDP group over every rank (no TP, HSDP or expert parallel): graph and comms then take no mesh. */
export const isPlainFsdp = (mesh: Mesh): boolean => isOneDim(mesh) && epDegree(mesh) === 1;

/** A rank's index along `dim`. */
export function meshIndex(mesh: Mesh, dim: MeshDim, rank: number): number {
  const g = meshGroup(mesh, dim);
  return Math.floor(rank / g.stride) % g.size;
}

/** A process-group instance as a rank sees it: the group's name, its members (global ranks), its place among them. */
export interface GroupInstance {
  readonly group: string;
  readonly members: readonly number[];
  readonly localRank: number;
}

/** The dense mesh's dimensions and, with expert parallel, the expert mesh's ep and efsdp. */
export const liveDims = (mesh: Mesh): readonly MeshDim[] =>
  epDegree(mesh) > 1 ? [...MESH_DIMS, 'ep', 'efsdp'] : MESH_DIMS;

/** The mesh dimension a process group's name stands for ('dp' on a 1-D mesh); undefined when none does. */
function dimOfGroup(mesh: Mesh, group: string): MeshDim | undefined {
  return liveDims(mesh).find((d) => meshGroup(mesh, d).group === group);
}

/** The instance of `group` that `rank` belongs to (sim's groupInstance on the group's size and stride). */
export function meshGroupInstance(mesh: Mesh, group: string, rank: number): GroupInstance {
  const dim = dimOfGroup(mesh, group);
  if (dim === undefined) {
    const known = liveDims(mesh).map((d) => meshGroup(mesh, d).group);
    const groups = known.join(', ');
    throw new FsdpSimError('runtime', `process group '${group}' is not a dimension of the mesh (groups: ${groups})`);
  }
  const { size, stride } = meshGroup(mesh, dim);
  const { first } = groupInstance(rank, size, meshSize(mesh), stride);
  const members = Array.from({ length: size }, (_, i) => first + i * stride);
  return { group, members, localRank: (rank - first) / stride };
}

/** Data parallelism over the mesh: ranks of one tp group train on the same rows. */
export function dataParallelRank(mesh: Mesh, rank: number): { readonly index: number; readonly size: number } {
  const index = meshIndex(mesh, 'dp_replicate', rank) * mesh.dpShard + meshIndex(mesh, 'dp_shard', rank);
  return { index, size: mesh.dpReplicate * mesh.dpShard };
}

/** The dimension the TP plan splits a parameter on (graph's localShape vs shape); -1 when it is replicated. */
export function tpSplitDim(p: ParamInfo): number {
  if (p.localShape === undefined) return -1;
  return p.shape.findIndex((s, d) => s !== p.localShape?.[d]);
}

/** [outer, size of the split dim, inner] of a row-major tensor split on `dim`. */
function splitGeometry(shape: readonly number[], dim: number): { outer: number; extent: number; inner: number } {
  const prod = (xs: readonly number[]) => xs.reduce((a, b) => a * b, 1);
  return { outer: prod(shape.slice(0, dim)), extent: shape[dim], inner: prod(shape.slice(dim + 1)) };
}

/** Whether the parameter is a routed expert's weights split across ep (graph/fsdp.ts shardParam's expert case). */
export function isEpSplit(mesh: Mesh, p: ParamInfo): boolean {
  return epDegree(mesh) > 1 && Object.values(EXPERT_WEIGHTS).some((w) => p.name.endsWith(`.${w}`));
}

/** The parameter as FSDP shards it on `mesh`: this rank's E / ep experts, or the TP-local shape. */
export function meshLocalParam(mesh: Mesh, p: ParamInfo): ParamInfo {
  if (!isEpSplit(mesh, p)) return localParam(p);
  const shape = p.shape.map((x, d) => (d === 0 ? x / epDegree(mesh) : x));
  return { ...p, shape, numel: p.numel / epDegree(mesh) };
}

/** The slice of a full parameter the rank's FSDP group shards: its experts (dim 0 over ep) or its TP slice. */
export function meshSlice(full: Float32Array, p: ParamInfo, mesh: Mesh, rank: number): Float32Array {
  if (!isEpSplit(mesh, p)) return tpSlice(full, p, meshIndex(mesh, 'tp', rank), mesh.tp);
  const part = p.numel / epDegree(mesh);
  const at = meshIndex(mesh, 'ep', rank) * part;
  return full.slice(at, at + part);
}

/** The parameter as FSDP shards it: the TP-local shape (the full shape without TP). */
function localParam(p: ParamInfo): ParamInfo {
  const shape = p.localShape ?? p.shape;
  return { ...p, shape, numel: shape.reduce((a, b) => a * b, 1) };
}

/** Rank `tpIndex`'s TP slice of a full parameter (`full` itself when the parameter is replicated). */
export function tpSlice(full: Float32Array, p: ParamInfo, tpIndex: number, tp: number): Float32Array {
  const dim = tpSplitDim(p);
  if (dim < 0 || tp === 1) return full;
  const { outer, extent, inner } = splitGeometry(p.shape, dim);
  const part = extent / tp;
  const out = new Float32Array(outer * part * inner);
  for (let o = 0; o < outer; o++) {
    const from = (o * extent + tpIndex * part) * inner;
    out.set(full.subarray(from, from + part * inner), o * part * inner);
  }
  return out;
}

/** The full parameter from its TP slices in tp order (inverse of tpSlice). */
export function tpAssemble(slices: readonly Float32Array[], p: ParamInfo): Float32Array {
  const dim = tpSplitDim(p);
  if (dim < 0 || slices.length === 1) return slices[0];
  const { outer, extent, inner } = splitGeometry(p.shape, dim);
  const part = extent / slices.length;
  const full = new Float32Array(p.numel);
  slices.forEach((s, t) => {
    for (let o = 0; o < outer; o++) {
      full.set(s.subarray(o * part * inner, (o + 1) * part * inner), (o * extent + t * part) * inner);
    }
  });
  return full;
}
