// Tests of the CPU elementwise add.
import { describe, expect, it } from 'vitest';
import { add } from '../../../src/runtime/cpu/add';

describe('add', () => {
  it('adds elementwise up to n and leaves the tail alone', () => {
    const c = Float32Array.from([9, 9, 9]);
    add(Float32Array.from([1, 2, 3]), Float32Array.from([10, 20, 30]), c, 2);
    expect(Array.from(c)).toEqual([11, 22, 9]);
  });
});
