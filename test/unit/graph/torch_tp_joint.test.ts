// The joint graph (graph_trainer's aot_fx_trace) of FSDP 4 × TP 2 against torch 2.13's own:
// test/fixtures/torch_tp/llama3_8b_fsdp4_tp2_joint.json.gz holds the collectives of the forward-
// loss-backward graph torch traced for torchtitan's Llama3-8B TP plan + SimpleFSDP at 1, 2 and 3
// layers, before partitioning (tools/torch_tp/trace_tp.py --joint-out), each in the phase autograd
// traced it in. fsdp-sim's aot_fx_trace graph with memory policy 'none' (nothing recomputed) must
// have every one of them — phase, group, op, bytes, dtype — as many times; under the other policies
// the same once the backward's re-gathers and recomputed collectives are set aside. The one named
// difference: loss_parallel's 3 all-reduces on tp, which fsdp-sim's loss op runs inside itself.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { buildStepGraph, type StepConfig } from '../../../src/graph';
import type { GraphNode, StepGraph } from '../../../src/graph/types';
import { MODEL_PRESETS } from '../../../src/model';
import { fixturePath } from '../../helpers/fixtures';

interface JointCollective {
  readonly phase: 'fw' | 'bw';
  readonly op: string;
  readonly group: string;
  readonly kind: string;
  readonly in_bytes: number;
  readonly out_bytes: number;
  readonly out_dtype: string;
}

const FIXTURE_PATH = fixturePath('torch_tp/llama3_8b_fsdp4_tp2_joint.json.gz');
const FIXTURE = JSON.parse(gunzipSync(readFileSync(FIXTURE_PATH)).toString());
const JOINT: Record<string, readonly JointCollective[]> = FIXTURE.variants['sac=none,reshard_after_forward=true'];
const LOSS_PARALLEL = 'loss_parallel_all_reduce';
const OP = {
  all_gather: 'all_gather_into_tensor',
  reduce_scatter: 'reduce_scatter_tensor',
  all_reduce: 'all_reduce',
  all_to_all: 'all_to_all_single',
};
const DTYPE: Record<string, string> = { bf16: 'bfloat16', fp32: 'float32', fp16: 'float16' };

function graphOf(nLayers: number, extra: Partial<StepConfig>): StepGraph {
  return buildStepGraph({
    model: { ...MODEL_PRESETS['llama3-8b'], nLayers },
    worldSize: 8,
    batch: 1,
    seqLen: 8192,
    mesh: { dpReplicate: 1, dpShard: 4, tp: 2 },
    compileMode: 'aot_fx_trace',
    ...extra,
  });
}

function tally(keys: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const k of [...keys].sort()) m.set(k, (m.get(k) ?? 0) + 1);
  return m;
}

const torchKeys = (list: readonly JointCollective[]) =>
  list
    .filter((c) => c.kind !== LOSS_PARALLEL)
    .map((c) => `${c.phase} ${c.group} ${c.op} ${c.in_bytes}→${c.out_bytes} ${c.out_dtype}`);

/** The collective nodes the backward adds to the traced graph: re-gathers and recomputed ones. */
const regather = (n: GraphNode) =>
  n.phase === 'backward' && n.collective?.group === 'dp_shard' && n.kind === 'all_gather';
const added = (n: GraphNode) => n.attrs?.recompute === true || regather(n);

function simKeys(g: StepGraph, keep: (n: GraphNode) => boolean = () => true): string[] {
  return g.nodes
    .filter((n) => n.collective && keep(n))
    .map((n) => {
      const c = n.collective!;
      const phase = n.phase === 'forward' ? 'fw' : 'bw';
      return `${phase} ${c.group} ${OP[c.kind]} ${c.inputBytes}→${c.outputBytes} ${DTYPE[c.dtype]}`;
    });
}

describe('FSDP 4 × TP 2 joint-graph collectives match the graph torch 2.13 traces (Llama3-8B dims)', () => {
  for (const [layers, list] of Object.entries(JOINT)) {
    it(`${layers} layer(s), memory policy none: every collective of torch's joint graph as many times`, () => {
      const g = graphOf(Number(layers), { memoryPolicy: 'none' });
      expect(g.meta.jointGraph).toBe(true);
      expect(tally(simKeys(g))).toEqual(tally(torchKeys(list)));
      expect(list.filter((c) => c.kind === LOSS_PARALLEL)).toHaveLength(3);
    });

    it(`${layers} layer(s), memory policies default / full / eager: torch's graph plus the backward's copies`, () => {
      for (const memoryPolicy of ['default', 'full', 'eager'] as const) {
        const g = graphOf(Number(layers), { memoryPolicy });
        expect(tally(simKeys(g, (n) => !added(n))), memoryPolicy).toEqual(tally(torchKeys(list)));
        expect(g.nodes.some(added), memoryPolicy).toBe(true);
      }
    });
  }

  it("has, at 32 layers with nothing recomputed, PR #2961's 1,820 collective ops (collectives, waits)", () => {
    const g = graphOf(32, { memoryPolicy: 'none' });
    const collectives = g.nodes.filter((n) => n.collective).length + 3; // + loss_parallel's 3 all-reduces
    const waits = g.nodes.filter((n) => n.kind === 'wait').length + 3;
    expect(collectives + waits).toBe(1820);
  });
});
