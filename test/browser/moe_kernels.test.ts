// The WGSL MoE kernels (router, row gather / scatter-add / combine, grouped GEMM) against their CPU
// twins (src/runtime/cpu/moe_ops.ts) on seeded cases, run as ordinary ops of the WebGPU backend, in
// both browser instances; the router's expert picks and the plain gathers must be equal, the sums
// within abs + |ref|·eps.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runMoeCpuOp } from '../../src/runtime/cpu/moe_ops';
import { createGpuKernels, type GpuKernelBackend, requestKernelDevice } from '../../src/runtime/gpu';
import type { HostArray } from '../../src/runtime/kernels';
import { mismatches } from './kernel_check';
import { groupedMatmulCases, type MoeCase, routerCases, rowCases } from './moe_kernel_cases';

const level = inject('webgpuFeatureLevel');
let backend: GpuKernelBackend | undefined;
let acquireError: unknown;

beforeAll(async () => {
  try {
    const kd = await requestKernelDevice({ featureLevel: level });
    backend = createGpuKernels(kd.device, { label: kd.label });
  } catch (e) {
    acquireError = e;
  }
});

afterAll(() => {
  backend?.destroy();
});

const fresh = (o: MoeCase['outputs'][number]): HostArray =>
  o.type === 'i32' ? new Int32Array(o.length) : new Float32Array(o.length);

async function runOnGpu(c: MoeCase): Promise<HostArray[]> {
  if (!backend) throw new Error(`no WebGPU device (${level}): ${String(acquireError)}`);
  const b = backend;
  const ins = c.inputs.map((data, i) => {
    const t = b.create(`${c.name}.in${i}`, data.length, data instanceof Int32Array ? 'i32' : 'f32');
    b.upload(t, data);
    return t;
  });
  const outs = c.outputs.map((o, i) => b.create(`${c.name}.out${i}`, o.length, o.type));
  b.run(c.op, c.attrs, ins, outs); // an ordinary op of the backend, on its own queue
  const got = c.outputs.map(fresh);
  await b.downloadAll(outs.map((t, i) => ({ t, into: got[i] })));
  for (const t of [...ins, ...outs]) b.release(t);
  return got;
}

async function expectMatchesCpu(c: MoeCase): Promise<void> {
  const want = c.outputs.map(fresh);
  runMoeCpuOp(c.op, c.attrs, c.inputs, want);
  const got = await runOnGpu(c);
  const bad = want.flatMap((w, i) => {
    const [abs, eps] = w instanceof Int32Array ? [0, 0] : (c.tol[i] ?? [1e-5, 1e-4]);
    return mismatches(`${c.name} out${i}`, w, got[i], abs, eps);
  });
  expect(bad, `${c.name} (${level}):\n${bad.join('\n')}`).toEqual([]);
}

describe('MoE kernels (WGSL vs CPU)', () => {
  const groups: [string, () => MoeCase[]][] = [
    ['router top-k with the lower-index tie-break (fwd, bwd)', () => routerCases(1)],
    ['row gather, scatter-add and gate-weighted combine (fwd, bwd)', () => rowCases(2)],
    ['grouped GEMM with an empty expert (fwd, dX, dW)', () => groupedMatmulCases(3)],
  ];
  for (const [what, cases] of groups) {
    it(`${what} match the CPU reference`, async () => {
      for (const c of cases()) await expectMatchesCpu(c);
    });
  }
});
