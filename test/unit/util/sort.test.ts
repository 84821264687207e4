// sortAscending against Array#sort with a numeric comparator, on short and long random lists.
import { describe, expect, it } from 'vitest';
import { sortAscending } from '../../../src/util';
import { rng } from '../../helpers/rng';

describe('sortAscending', () => {
  it('sorts in place as Array#sort does, below and above the insertion-sort length', () => {
    const r = rng(3);
    for (let trial = 0; trial < 300; trial++) {
      const xs = Array.from({ length: Math.floor(r() * 40) }, () => Math.floor(r() * 20) - 5);
      const want = [...xs].sort((a, b) => a - b);
      const got = sortAscending(xs);
      expect(got).toBe(xs);
      expect(got).toEqual(want);
    }
  });
});
