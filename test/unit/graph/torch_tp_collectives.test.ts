// The FSDP 4 × TP 2 step graph against torch 2.13's own: test/fixtures/torch_tp/ holds the forward
// and backward graphs torch traced for torchtitan's Llama3-8B TP plan + SimpleFSDP + selective op
// AC at 1, 2 and 3 layers (tools/torch_tp/trace_tp.py: DTensor on meta tensors, fake process
// group). Every collective there — phase, group, op, bytes in and out, dtype — must be in fsdp-sim's
// graph as many times, and every layout copy torch runs beside a TP collective too. The one
// difference is named: torch's loss_parallel adds 3 small all-reduces on tp (row max, sum of exp,
// target logit), which fsdp-sim's loss op runs inside itself (src/runtime/exec/loss_parallel.ts).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildStepGraph } from '../../../src/graph';
import type { StepGraph } from '../../../src/graph/types';
import { MODEL_PRESETS } from '../../../src/model';
import { fixturePath } from '../../helpers/fixtures';

interface TorchCollective {
  readonly op: string;
  readonly group: string;
  readonly kind: string;
  readonly in_bytes: number;
  readonly out_bytes: number;
  readonly out_dtype: string;
  readonly before?: readonly { readonly op: string; readonly bytes?: number; readonly is_copy?: boolean }[];
  readonly after?: readonly { readonly op: string; readonly bytes?: number; readonly is_copy?: boolean }[];
}
interface TorchTrace {
  readonly fw: { readonly list: readonly TorchCollective[] };
  readonly bw: { readonly list: readonly TorchCollective[] };
}

const FIXTURE = JSON.parse(readFileSync(fixturePath('torch_tp/llama3_8b_fsdp4_tp2.json'), 'utf8'));
const TRACES: Record<string, TorchTrace> = FIXTURE.variants['sac=op,reshard_after_forward=true'].traces;
const LOSS_PARALLEL = 'loss_parallel_all_reduce';
const OP = {
  all_gather: 'all_gather_into_tensor',
  reduce_scatter: 'reduce_scatter_tensor',
  all_reduce: 'all_reduce',
  all_to_all: 'all_to_all_single',
} as const;
const DTYPE: Record<string, string> = { bf16: 'bfloat16', fp32: 'float32', fp16: 'float16' };

function graphOf(nLayers: number): StepGraph {
  return buildStepGraph({
    model: { ...MODEL_PRESETS['llama3-8b'], nLayers },
    worldSize: 8,
    batch: 1,
    seqLen: 8192,
    activationCheckpointing: 'selective',
    mesh: { dpReplicate: 1, dpShard: 4, tp: 2 },
  });
}

const key = (phase: string, group: string, op: string, inB: number, outB: number, dtype: string) =>
  `${phase} ${group} ${op} ${inB}→${outB} ${dtype}`;

function tally(keys: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const k of keys) m.set(k, (m.get(k) ?? 0) + 1);
  return new Map([...m].sort(([a], [b]) => a.localeCompare(b)));
}

function torchKeys(t: TorchTrace, keep: (c: TorchCollective) => boolean): string[] {
  return (['fw', 'bw'] as const).flatMap((ph) =>
    t[ph].list.filter(keep).map((c) => key(ph, c.group, c.op, c.in_bytes, c.out_bytes, c.out_dtype)),
  );
}

function simKeys(g: StepGraph): string[] {
  return g.nodes
    .filter((n) => n.collective)
    .map((n) => {
      const c = n.collective!;
      const phase = n.phase === 'forward' ? 'fw' : 'bw';
      return key(phase, c.group, OP[c.kind], c.inputBytes, c.outputBytes, DTYPE[c.dtype]);
    });
}

/** Copy nodes of fsdp-sim's graph that feed (before) or read (after) a tp collective. */
function simTpCopies(g: StepGraph): { before: number; after: number } {
  const producer = new Map(g.nodes.flatMap((n) => n.outputs.map((t) => [t, n] as const)));
  const tp = g.nodes.filter((n) => n.collective?.group === 'tp');
  const before = tp.filter((n) => n.inputs.some((t) => producer.get(t)?.op === 'copy')).length;
  const tpOut = new Set(tp.flatMap((n) => n.outputs));
  const after = g.nodes.filter((n) => n.op === 'copy' && n.inputs.some((t) => tpOut.has(t))).length;
  return { before, after };
}

const torchTpCopies = (t: TorchTrace, side: 'before' | 'after') =>
  [...t.fw.list, ...t.bw.list]
    .filter((c) => c.group === 'tp' && c.kind !== 'norm_weight_grad_all_reduce')
    .filter((c) => (c[side] ?? []).some((n) => n.is_copy)).length;

describe('FSDP 4 × TP 2 collectives match torch 2.13 traced graphs (Llama3-8B dims)', () => {
  for (const [layers, trace] of Object.entries(TRACES)) {
    it(`${layers} layer(s): every collective (phase, group, op, bytes, dtype) as many times as torch's`, () => {
      const g = graphOf(Number(layers));
      expect(tally(simKeys(g))).toEqual(tally(torchKeys(trace, (c) => c.kind !== LOSS_PARALLEL)));
      expect(trace.fw.list.filter((c) => c.kind === LOSS_PARALLEL)).toHaveLength(3);
      const recomputed = g.nodes.filter((n) => n.collective?.group === 'tp' && n.attrs?.recompute === true).length;
      expect(recomputed).toBe(trace.bw.list.filter((c) => c.kind === 'sp_activation_gather_recomputed').length);
    });

    it(`${layers} layer(s): a layout copy before every TP reduce-scatter, none after the all-gathers`, () => {
      const sim = simTpCopies(graphOf(Number(layers)));
      expect(sim.before).toBe(torchTpCopies(trace, 'before'));
      expect(sim.before).toBeGreaterThan(0);
      expect(sim.after).toBe(torchTpCopies(trace, 'after'));
    });
  }

  it('counts, as torch counts the joint graph, the 1,820 collective ops of torchtitan PR #2961 at 32 layers', () => {
    // PR #2961 counts _c10d_functional nodes (collectives and their waits) in the one forward-loss-
    // backward graph, before the partitioner adds re-gathers and recomputed gathers.
    const g = graphOf(32);
    const colls = g.nodes.filter((n) => n.collective);
    const regathered = colls.filter(
      (n) =>
        n.phase === 'backward' &&
        n.collective!.kind === 'all_gather' &&
        (n.collective!.group !== 'tp' || n.attrs?.recompute === true),
    ).length;
    const joint = colls.length - regathered + 3; // + loss_parallel's 3 all-reduces
    expect(2 * joint).toBe(1820);
  });
});
