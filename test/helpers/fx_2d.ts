// The check both 2-D FX suites make of an imported graph (torch's own pass dumps, test/fixtures/
// torch_pass_2d, and fx_dump's, test/fixtures/fx_dump_2d): every collective on the group and size
// its dump row names, dp_shard members tp ranks apart.
import { expect } from 'vitest';
import type { StepGraph } from '../../src/graph';

/** A dumped collective's row: its target (`_c10d_functional.<op>.default`) and its group fields. */
export interface RawCollectiveRow {
  readonly target: string;
  readonly group_size?: number;
  readonly mesh_dim?: string;
}

const KIND: Readonly<Record<string, string>> = {
  all_gather_into_tensor: 'all_gather',
  reduce_scatter_tensor: 'reduce_scatter',
  all_reduce: 'all_reduce',
};

/**
 * The graph's collectives are the same multiset of (kind, group, size) as the dumps' rows, and each
 * dp_shard collective's members are `tp` ranks apart (the others adjacent). Returns the collectives.
 */
export function expectCollectiveGroups(g: StepGraph, rows: readonly RawCollectiveRow[], tp: number) {
  const want = rows.map((n) => `${KIND[n.target.split('.')[1]]}|${n.mesh_dim}|${n.group_size}`);
  const coll = g.nodes.filter((n) => n.collective !== undefined);
  const got = coll.map((n) => `${n.collective?.kind}|${n.collective?.group}|${n.collective?.groupSize}`);
  expect(got.sort()).toEqual(want.sort());
  for (const n of coll) expect(n.collective?.groupStride ?? 1).toBe(n.collective?.group === 'dp_shard' ? tp : 1);
  return coll;
}
