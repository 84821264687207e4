// Every WGSL kernel against its CPU twin (src/runtime/cpu) on seeded random shapes, in both
// browser instances (SwiftShader core, lavapipe compatibility). One device per file so the
// pipeline cache is shared; the first test fails (never skips) when WebGPU is missing.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createCpuKernels } from '../../src/runtime/cpu';
import {
  cachedPipelineCount,
  createGpuKernels,
  ENTRY_POINTS,
  precompileKernels,
  type GpuKernelBackend,
  type KernelDevice,
  MATMUL_VARIANTS,
  requestKernelDevice,
} from '../../src/runtime/gpu';
import {
  attentionCases,
  elementwiseCases,
  embeddingCases,
  MATMUL_SHAPES,
  matmulCase,
  rmsNormCases,
  swigluCases,
} from './kernel_cases';
import { compareCase, type OpCase, runCase } from './kernel_check';

const level = inject('webgpuFeatureLevel');
const cpu = createCpuKernels();
let kd: KernelDevice | undefined;
let acquireError: unknown;
let precompiled = 0;
const backends = new Map<number, GpuKernelBackend>();

beforeAll(async () => {
  try {
    kd = await requestKernelDevice({ featureLevel: level });
    await precompileKernels(kd.device); // concurrent compiles instead of one blocking compile per first run
    // attention's pipelines are sized to their shapes (kernel_constants.ts): warm the cases' shapes too
    const warm = createGpuKernels(kd.device);
    await warm.warm?.(attentionCases(4).map((c) => ({ op: c.op, attrs: c.attrs })));
    warm.destroy();
    precompiled = cachedPipelineCount(kd.device);
  } catch (e) {
    acquireError = e; // reported by the first test and by every kernel test
  }
});

afterAll(() => {
  for (const b of backends.values()) b.destroy();
  kd?.device.destroy();
});

function gpu(variant = 3): GpuKernelBackend {
  if (!kd) throw new Error(`no WebGPU device (${level}): ${String(acquireError)}`);
  let b = backends.get(variant);
  if (!b) {
    b = createGpuKernels(kd.device, { matmulVariant: variant as 1 | 2 | 3, label: kd.label });
    backends.set(variant, b);
  }
  return b;
}

async function expectMatchesCpu(c: OpCase, variant = 3) {
  const bad = await compareCase(cpu, gpu(variant), c);
  expect(bad, `${c.name} on ${kd?.label}:\n${bad.join('\n')}`).toEqual([]);
}

describe('requestKernelDevice', () => {
  it(`finds navigator.gpu and a ${level} adapter (fails when WebGPU is missing)`, () => {
    expect(typeof navigator.gpu, 'navigator.gpu').toBe('object');
    expect(acquireError, String(acquireError)).toBeUndefined();
    expect(kd?.featureLevel).toBe(level);
  });

  it('measures device time in sync() exactly when the device has timestamp-query', async () => {
    const b = gpu();
    const [a, w, c] = [
      b.create('a', 128 * 128, 'f32'),
      b.create('w', 128 * 128, 'f32'),
      b.create('c', 128 * 128, 'f32'),
    ];
    await b.sync();
    b.run('matmul', { M: 128, N: 128, K: 128 }, [a, w], [c]);
    const us = await b.sync();
    expect(us !== undefined).toBe(kd?.timestampQuery === true);
    expect(us ?? 1).toBeGreaterThan(0);
    for (const t of [a, w, c]) b.release(t);
  });
});

describe('matmul', () => {
  for (const variant of MATMUL_VARIANTS) {
    it(`variant ${variant} matches the CPU reference for every trans form and edge shape`, async () => {
      let seed = 100 * variant;
      for (const [M, N, K] of MATMUL_SHAPES) {
        for (const [transA, transB] of [
          [false, false],
          [false, true],
          [true, false],
          [true, true],
        ] as const) {
          await expectMatchesCpu(matmulCase(M, N, K, transA, transB, seed++), variant);
        }
      }
    });
  }

  it('shares one pipeline per variant across backends on the device', () => {
    const before = cachedPipelineCount(gpu().device);
    createGpuKernels(gpu().device, { matmulVariant: 3 }).destroy();
    expect(cachedPipelineCount(gpu().device)).toBe(before);
  });
});

describe('kernels', () => {
  const groups: [string, () => OpCase[]][] = [
    ['embedding (fwd, deterministic scatter-add bwd)', () => embeddingCases(1)],
    ['rms_norm (fwd, bwd)', () => rmsNormCases(2)],
    ['swiglu (fwd, bwd)', () => swigluCases(3)],
    ['causal attention with GQA (fwd, bwd)', () => attentionCases(4)],
    ['add, cross_entropy (fwd, bwd), adamw', () => elementwiseCases(5)],
  ];
  for (const [what, cases] of groups) {
    it(`${what} match the CPU reference`, async () => {
      for (const c of cases()) await expectMatchesCpu(c);
    });
  }

  it('compiled every pipeline up front: run() added none beyond the precompiled set', () => {
    expect(precompiled).toBeGreaterThan(ENTRY_POINTS.length); // every entry point, attention also per shape
    expect(cachedPipelineCount(gpu().device)).toBe(precompiled);
  });

  it('gives bit-identical losses and embedding gradients on repeated runs', async () => {
    for (const c of [elementwiseCases(6)[1], embeddingCases(7)[1]]) {
      const [a, b] = [await runCase(gpu(), c), await runCase(gpu(), c)];
      expect(Array.from(b[0]), c.name).toEqual(Array.from(a[0]));
    }
  });
});
