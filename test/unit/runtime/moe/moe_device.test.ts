// What a MoE run says about its device: the MoE ops run on the host CPU kernels whatever the rank's
// backend (exec/moe_exec.ts), so a WebGPU rank's label says so, and its kernels never compile them.
import { describe, expect, it } from 'vitest';
import { MOE_OPS } from '../../../../src/graph/ops';
import { deviceLabel, kernelUses } from '../../../../src/runtime/rank';
import type { KernelBackend } from '../../../../src/runtime/kernels';
import { planTraining } from '../../../../src/runtime/training_plan';
import { LIVE_BASE } from '../../../helpers/live_training';

const schedule = (model: 'tiny' | 'moe-tiny') => planTraining({ ...LIVE_BASE, model, ranks: 2 }).schedule;
const backend = (kind: 'webgpu' | 'cpu', label: string) => ({ kind, label }) as KernelBackend;

describe('MoE runs and the kernel backend', () => {
  it('labels a WebGPU rank of a MoE schedule with the ops that run on CPU kernels', () => {
    const gpu = backend('webgpu', 'webgpu: test adapter');
    expect(deviceLabel(gpu, schedule('moe-tiny'))).toBe(
      'webgpu: test adapter; MoE router, permutes and expert GEMMs on CPU kernels',
    );
    expect(deviceLabel(gpu, schedule('tiny'))).toBe('webgpu: test adapter');
    expect(deviceLabel(backend('cpu', 'cpu reference'), schedule('moe-tiny'))).toBe('cpu reference');
  });

  it('asks the kernels to compile no MoE op, but the row-wise ops the experts share', () => {
    const ops = new Set(kernelUses(schedule('moe-tiny')).map((u) => u.op));
    for (const op of MOE_OPS) expect(ops.has(op), op).toBe(false);
    expect([...ops]).toEqual(expect.arrayContaining(['matmul', 'swiglu', 'attention', 'adamw']));
  });
});
