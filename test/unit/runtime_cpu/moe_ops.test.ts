// Tests of the MoE kernel ops' CPU runner (the reference the WGSL runner is checked against in
// test/browser/moe_kernels.test.ts): it dispatches to the kernels, and bad calls name the op and
// the attribute or slot. The lengths the WebGPU backend checks before recording a MoE kernel are
// enough for the CPU kernels, and a tensor one element short is refused naming its slot.
import { describe, expect, it } from 'vitest';
import { createCpuKernels, gatherRows } from '../../../src/runtime/cpu';
import { checkMoeTensors, type MoeKernelOp, moeTensorLengths, runMoeCpuOp } from '../../../src/runtime/cpu/moe_ops';
import type { HostArray } from '../../../src/runtime/kernels';

const src = Float32Array.from({ length: 12 }, (_, i) => i);
const index = Int32Array.from([2, 0, 2]);

describe('runMoeCpuOp', () => {
  it('runs gather_rows like gatherRows', () => {
    const got = new Float32Array(12);
    const want = new Float32Array(12);
    runMoeCpuOp('gather_rows', { rows: 3, cols: 4, srcRows: 3 }, [src, index], [got]);
    gatherRows(src, index, want, { rows: 3, cols: 4, srcRows: 3 });
    expect(Array.from(got)).toEqual(Array.from(want));
    expect(Array.from(got.subarray(0, 4))).toEqual([8, 9, 10, 11]);
  });

  it('names a missing attribute and an index buffer of the wrong type', () => {
    expect(() => runMoeCpuOp('gather_rows', { rows: 3, srcRows: 3 }, [src, index], [new Float32Array(12)])).toThrow(
      'gather_rows.cols must be an integer ≥ 1, got undefined',
    );
    expect(() =>
      runMoeCpuOp('gather_rows', { rows: 3, cols: 4, srcRows: 3 }, [src, src], [new Float32Array(12)]),
    ).toThrow('gather_rows inputs[1] must be i32');
  });

  it('refuses an op it does not know, listing the ones it does', () => {
    expect(() => runMoeCpuOp('moe_magic' as 'gather_rows', {}, [], [])).toThrow(
      /op must be one of \[moe_router, .*\], got "moe_magic"/,
    );
  });
});

// i32 slots per op (MOE_KERNEL_OPS' comments): the rest are f32
const I32_SLOTS: Record<MoeKernelOp, { inputs: number[]; outputs: number[] }> = {
  moe_router: { inputs: [], outputs: [1] },
  moe_router_bwd: { inputs: [2], outputs: [] },
  gather_rows: { inputs: [1], outputs: [] },
  scatter_add_rows: { inputs: [1], outputs: [] },
  combine_rows: { inputs: [1], outputs: [] },
  combine_rows_bwd: { inputs: [2], outputs: [] },
  grouped_matmul: { inputs: [2], outputs: [] },
  grouped_matmul_bwd_x: { inputs: [2], outputs: [] },
  grouped_matmul_bwd_w: { inputs: [2], outputs: [] },
};
// 3 tokens, top 2 of 2 experts; 4 rows of 2 gathered from 6; grouped GEMMs of 4 rows, K 3, N 2
const ATTRS = { tokens: 3, experts: 2, topK: 2, rows: 4, cols: 2, srcRows: 6, K: 3, N: 2 };
const OFFSETS = [0, 1, 4]; // expert 0 gets row 0, expert 1 rows 1..3

/** Arrays of exactly the checked lengths: f32 counting up, indices 0, offsets OFFSETS. */
function arraysFor(op: MoeKernelOp, lengths: number[], i32: number[]): HostArray[] {
  return lengths.map((n, slot) => {
    if (!i32.includes(slot)) return Float32Array.from({ length: n }, (_, i) => i / 8);
    return op.startsWith('grouped') ? Int32Array.from(OFFSETS) : new Int32Array(n);
  });
}

describe('MoE kernel tensor lengths (checked by the WebGPU backend)', () => {
  for (const op of Object.keys(I32_SLOTS) as MoeKernelOp[]) {
    it(`${op}: the checked lengths run on the CPU kernels; one element short is refused by slot`, () => {
      const want = moeTensorLengths(op, ATTRS);
      const ins = arraysFor(op, want.inputs, I32_SLOTS[op].inputs);
      const outs = arraysFor(op, want.outputs, I32_SLOTS[op].outputs);
      expect(() => runMoeCpuOp(op, ATTRS, ins, outs)).not.toThrow();
      expect(() => checkMoeTensors(op, ATTRS, ins, outs)).not.toThrow();
      for (const [side, list] of [
        ['inputs', ins],
        ['outputs', outs],
      ] as const) {
        list.forEach((a, i) => {
          const short = list.map((b, j) => (j === i ? b.subarray(0, b.length - 1) : b));
          const [si, so] = side === 'inputs' ? [short, outs] : [ins, short];
          expect(() => checkMoeTensors(op, ATTRS, si, so)).toThrow(`${op}.${side}[${i}] must hold ≥ ${a.length}`);
        });
      }
    });
  }

  it('runs a MoE kernel as an ordinary op of the CPU backend, the same as runMoeCpuOp', async () => {
    const k = createCpuKernels();
    const x = k.create('x', 12, 'f32');
    const idx = k.create('idx', 3, 'i32');
    const y = k.create('y', 12, 'f32');
    k.upload(x, src);
    k.upload(idx, index);
    k.run('gather_rows', { rows: 3, cols: 4, srcRows: 3 }, [x, idx], [y]);
    const got = new Float32Array(12);
    const want = new Float32Array(12);
    await k.download(y, got);
    runMoeCpuOp('gather_rows', { rows: 3, cols: 4, srcRows: 3 }, [src, index], [want]);
    expect(Array.from(got)).toEqual(Array.from(want));
  });
});
