// What a MoE run asks of its kernel backend: each MoE node runs MoE kernels (cpu/moe_ops.ts) through the
// rank's KernelBackend (exec/moe_exec.ts), so the kernels a rank compiles before step 1 are those, never
// the graph's MoE ops, and on WebGPU every one of them has its pipelines in the warm list.
import { describe, expect, it } from 'vitest';
import { MOE_OPS } from '../../../../src/graph/ops';
import { moeKernelsOf } from '../../../../src/runtime/exec';
import { pipelinesFor } from '../../../../src/runtime/gpu/precompile';
import { kernelUses } from '../../../../src/runtime/rank';
import { planTraining } from '../../../../src/runtime/training_plan';
import { LIVE_BASE } from '../../../helpers/live_training';

const schedule = (model: 'tiny' | 'moe-tiny') => planTraining({ ...LIVE_BASE, model, ranks: 2 }).schedule;
const MOE_KERNELS = [
  'moe_router',
  'moe_router_bwd',
  'gather_rows',
  'combine_rows',
  'combine_rows_bwd',
  'grouped_matmul',
  'grouped_matmul_bwd_x',
  'grouped_matmul_bwd_w',
];

describe('MoE runs and the kernel backend', () => {
  it('maps each MoE node to the kernels it runs: the router backward recomputes the gates first', () => {
    const nodes = schedule('moe-tiny').graph.nodes.filter((n) => n.kind === 'compute');
    const of = (op: string) => nodes.filter((n) => n.op === op).map((n) => moeKernelsOf(n).join(' '));
    expect(new Set(of('router_topk_bwd'))).toEqual(new Set(['moe_router moe_router_bwd']));
    expect(new Set(of('grouped_mm'))).toEqual(
      new Set(['grouped_matmul', 'grouped_matmul_bwd_x', 'grouped_matmul_bwd_w']),
    );
    expect(of('matmul').every((k) => k === '')).toBe(true);
  });

  it('asks the kernels to compile the MoE kernels, no MoE graph op, and the row-wise ops the experts share', () => {
    const ops = new Set(kernelUses(schedule('moe-tiny')).map((u) => u.op));
    for (const op of MOE_OPS) expect(ops.has(op), op).toBe(false);
    expect([...ops]).toEqual(expect.arrayContaining([...MOE_KERNELS, 'matmul', 'swiglu', 'attention', 'adamw']));
    expect([...kernelUses(schedule('tiny'))].some((u) => MOE_KERNELS.includes(u.op))).toBe(false);
  });

  it('warms a pipeline for every entry point the MoE kernels dispatch on WebGPU', () => {
    const specs = pipelinesFor(kernelUses(schedule('moe-tiny')), 1);
    const entries = new Set(specs.map((s) => `${s.shader}:${s.entry}`));
    for (const e of [
      'moe_router:fwd',
      'moe_router:bwd',
      'moe_rows:gather',
      'moe_rows:combine',
      'moe_rows:combine_bwd_src',
      'moe_rows:combine_bwd_w',
      'grouped_matmul:fwd',
      'grouped_matmul:bwd_x',
      'grouped_matmul:bwd_w',
    ]) {
      expect(entries.has(e), e).toBe(true);
    }
  });
});
