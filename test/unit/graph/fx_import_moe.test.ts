// MoE graphs torch 2.15 traced (test/fixtures/torch_moe): all_to_all_single imports as an
// 'all_to_all' collective on the group its process-group name maps to, with its bytes from the
// shapes, no parameter and no reduction; a result that changes a dim other than 0 is refused.
import { describe, expect, it } from 'vitest';
import { gzJsonReader } from '../../helpers/torch_fixtures';
import { importFxGraph, type StepGraph } from '../../../src/graph';
import { fixtureUrl } from '../../helpers/fixtures';

interface RawNode {
  i: number;
  name: string;
  target: string;
  args: string[];
  shape?: number[];
  mesh_dim?: string;
  group_name?: string;
  group_size?: number;
}
interface Raw {
  group_names: Record<string, string>;
  nodes: RawNode[];
}

const readGz = gzJsonReader(fixtureUrl('torch_moe/'));
const FW = readGz('fx/moe_1layer_fw.json.gz') as Raw;
const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x));
const OUTPUT = FW.nodes[FW.nodes.length - 1];
const A2A = FW.nodes.filter((n) => n.target === '_c10d_functional.all_to_all_single.default');

function imported(x: unknown): StepGraph {
  const r = importFxGraph(x);
  if (!r.ok) throw r.error;
  return r.value;
}

describe('all_to_all_single from a torch dump', () => {
  it('imports on ep from the process-group name alone, bytes from the shapes, waited on once', () => {
    expect(A2A).toHaveLength(2);
    const raw = clone(FW);
    for (const n of raw.nodes) if (n.mesh_dim === 'ep') delete n.mesh_dim; // only group_name '7' and group_names
    const g = imported(raw);
    const byName = new Map(g.nodes.map((n) => [n.name, n]));
    for (const fx of A2A) {
      const node = byName.get(fx.name)!;
      expect(node.kind).toBe('all_to_all');
      const bytes = (fx.shape ?? []).reduce((a, b) => a * b, 2); // bf16 rows
      expect(node.collective).toEqual({
        kind: 'all_to_all',
        group: FW.group_names[fx.group_name!],
        groupSize: 2,
        dtype: 'bf16',
        inputBytes: bytes,
        outputBytes: bytes,
      });
      expect(node.params).toBeUndefined();
      expect(g.nodes.filter((n) => n.waitOf === fx.name)).toHaveLength(1);
    }
    expect(FW.group_names[A2A[0].group_name!]).toBe('ep');
  });

  it('keeps every dim but 0: rows may differ, a changed row width is refused naming the shape', () => {
    const i = FW.nodes.findIndex((n) => n.name === A2A[0].name);
    // the dump cut after the all-to-all's wait (what follows assumed the even split)
    const uneven = clone(FW);
    const [rows, width] = uneven.nodes[i].shape!;
    const wait = uneven.nodes[i + 1];
    uneven.nodes = [...uneven.nodes.slice(0, i + 2), { ...OUTPUT, i: i + 2, args: [wait.name] }];
    for (const n of [uneven.nodes[i], wait]) n.shape = [rows + 6, width];
    const node = imported(uneven).nodes.find((n) => n.name === A2A[0].name);
    expect(node?.collective).toMatchObject({ inputBytes: rows * width * 2, outputBytes: (rows + 6) * width * 2 });
    const bad = clone(FW);
    bad.nodes[i].shape = [rows / 2, width * 2];
    const r = importFxGraph(bad);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.where).toBe(`nodes[${i}].shape`);
    expect(r.error.message).toMatch(/does not fit an all_to_all_single .* \(every dim but 0 kept\)/);
  });
});
