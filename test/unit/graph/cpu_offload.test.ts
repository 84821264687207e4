// graph_trainer's sac_and_offload memory policy in the step graph (src/graph/cpu_offload.ts), checked
// against the default policy's graph: which tensors go to host memory (torchtitan
// tag_all_offloadable_activations), where the copies and waits go (apply_cpu_offload_pass,
// defer_offload_waits, prefetch_reloads), and that nothing else changes.
import { describe, expect, it } from 'vitest';
import { buildStepGraph, hostTransferOf, type StepConfig } from '../../../src/graph';
import { verifyGraph } from '../../../src/graph/verify';
import { offloadCandidates } from '../../../src/graph/cpu_offload';
import type { GraphNode, StepGraph } from '../../../src/graph/types';

const build = (memoryPolicy: StepConfig['memoryPolicy'], extra: Partial<StepConfig> = {}): StepGraph =>
  buildStepGraph({ model: 'small', worldSize: 4, compileMode: 'aot_fx_trace', memoryPolicy, ...extra });

const isAdded = (n: GraphNode) => hostTransferOf(n) !== undefined || n.op === 'ao.wait_tensor';
const offloads = (g: StepGraph) => g.nodes.filter((n) => hostTransferOf(n) === 'd2h');
const position = (g: StepGraph, name: string) => g.nodes.findIndex((n) => n.name === name);

/** torchtitan's rule on the default graph: forward outputs of all blocks but the last, read in the backward, ≥ 4 KB. */
function savedActivations(g: StepGraph): Set<string> {
  const last = Math.max(...g.nodes.flatMap((n) => (n.layer === undefined ? [] : [n.layer])));
  const readBack = new Set(g.nodes.filter((n) => n.phase === 'backward').flatMap((n) => n.inputs));
  return new Set(
    g.nodes
      .filter((n) => n.phase === 'forward' && n.layer !== undefined && n.layer < last)
      .filter((n) => n.kind === 'compute' || n.kind === 'cast')
      .flatMap((n) => n.outputs)
      .filter((id) => readBack.has(id) && g.tensors[id].aliasOf === undefined && g.tensors[id].bytes >= 4096),
  );
}

describe('sac_and_offload', () => {
  for (const mesh of [undefined, { dpReplicate: 1, dpShard: 2, tp: 2 }]) {
    const extra = mesh === undefined ? {} : { mesh };
    const what = mesh === undefined ? 'FSDP' : 'FSDP × TP';

    it(`${what}: offloads exactly the default policy's saved block activations, none of the last block`, () => {
      const base = build('default', extra);
      const g = build('sac_and_offload', extra);
      const moved = offloads(g).map((n) => n.inputs[0]);
      expect(moved.length).toBeGreaterThan(0);
      expect(new Set(moved)).toEqual(savedActivations(base));
      expect(verifyGraph(g)).toBe(g);
    });

    it(`${what}: is the default graph plus the copies, with the backward reading the reloaded tensors`, () => {
      const base = build('default', extra);
      const g = build('sac_and_offload', extra);
      const original = (id: string) => id.replace(/\.reloaded$/, '');
      const kept = g.nodes.filter((n) => !isAdded(n)).map((n) => ({ ...n, id: 0, inputs: n.inputs.map(original) }));
      expect(kept).toEqual(base.nodes.map((n) => ({ ...n, id: 0 })));
      const reloadedReads = g.nodes
        .filter((n) => n.phase === 'forward')
        .flatMap((n) => n.inputs)
        .filter((id) => id.endsWith('.reloaded'));
      expect(reloadedReads).toEqual([]);
      const moved = new Set(offloads(g).map((n) => n.inputs[0]));
      const stillRead = g.nodes.filter((n) => n.phase === 'backward' && !isAdded(n)).flatMap((n) => n.inputs);
      expect(stillRead.filter((id) => moved.has(id))).toEqual([]);
    });
  }

  it('copies after the producer, waits one layer later, reloads one layer ahead of the backward', () => {
    const g = build('sac_and_offload');
    for (const off of offloads(g)) {
      const t = off.inputs[0];
      const at = position(g, off.name);
      const producer = g.nodes.findIndex((n) => n.outputs.includes(t));
      expect(g.nodes.slice(producer + 1, at).every(isAdded), off.name).toBe(true); // other copies and waits
      expect(g.tensors[off.outputs[0]].host).toBe(true);
      const wait = position(g, `${t}.offload_wait`);
      const lastForwardRead = g.nodes.findLastIndex(
        (n) => n.phase === 'forward' && n.inputs.includes(t) && !isAdded(n),
      );
      const nextLayerEnd = g.nodes.findLastIndex(
        (n) => n.phase === 'forward' && n.layer === off.layer! + 1 && !isAdded(n),
      );
      expect(wait).toBeGreaterThan(Math.max(lastForwardRead, nextLayerEnd));
      expect(g.nodes[wait].inputs).toEqual([off.outputs[0], t]); // keepalive: the HBM tensor lives to here
      const reload = position(g, `${t}.reload`);
      const firstRead = g.nodes.findIndex((n) => n.inputs.includes(`${t}.reloaded`) && !isAdded(n));
      const nextLayerBackward = g.nodes.findIndex(
        (n) => n.phase === 'backward' && n.layer === off.layer! + 1 && !isAdded(n),
      );
      expect(reload).toBeLessThan(Math.min(firstRead, nextLayerBackward));
      expect(g.nodes[reload].bytesMoved).toBe(off.bytesMoved);
    }
  });

  it('takes the largest tensors first within the budget, skipping one that does not fit', () => {
    const g = build('default');
    const all = offloadCandidates(g);
    const sizes = [...new Set(all.map((c) => c.tensor.bytes))].sort((a, b) => b - a);
    expect(sizes.length).toBeGreaterThan(1);
    const [big, small] = sizes;
    const bigOnes = all.filter((c) => c.tensor.bytes === big).length;
    // room for every big tensor but one, plus one small: the last big one is skipped, a small one taken
    const budget = (bigOnes - 1) * big + small;
    const chosen = offloadCandidates(g, budget);
    expect(chosen.filter((c) => c.tensor.bytes === big).length).toBe(bigOnes - 1);
    expect(chosen.reduce((s, c) => s + c.tensor.bytes, 0)).toBeLessThanOrEqual(budget);
    expect(chosen.some((c) => c.tensor.bytes < big)).toBe(small <= budget - (bigOnes - 1) * big);
  });

  it("leaves the other policies' graphs without copies", () => {
    for (const p of ['default', 'full', 'eager', 'none'] as const) expect(build(p).nodes.some(isAdded), p).toBe(false);
    expect(buildStepGraph({ model: 'small', worldSize: 4, memoryPolicy: 'sac_and_offload' }).nodes.some(isAdded)).toBe(
      false,
    ); // jit: activation_checkpoint.mode decides, no offload pass
  });
});
