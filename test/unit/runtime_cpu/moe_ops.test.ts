// Tests of the MoE kernel ops' CPU runner (the reference the WGSL runner is checked against in
// test/browser/moe_kernels.test.ts): it dispatches to the kernels, and bad calls name the op and
// the attribute or slot.
import { describe, expect, it } from 'vitest';
import { gatherRows } from '../../../src/runtime/cpu';
import { runMoeCpuOp } from '../../../src/runtime/cpu/moe_ops';

describe('runMoeCpuOp', () => {
  const src = Float32Array.from({ length: 12 }, (_, i) => i);
  const index = Int32Array.from([2, 0, 2]);

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
