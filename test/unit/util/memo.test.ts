// src/util/memo.ts: one computation per key the caller names, object keys held weakly, text keys
// in a least-recently-used cache that never holds more than its capacity.
import { describe, expect, it } from 'vitest';
import { LruCache, lruMemo, weakMemo } from '../../../src/util';

describe('weakMemo', () => {
  it('computes once per key object, and the key function decides what a key is', () => {
    let calls = 0;
    const lengthOf = weakMemo(
      (xs: { readonly items: number[] }) => xs.items,
      (xs) => {
        calls++;
        return xs.items.length;
      },
    );
    const items = [1, 2, 3];
    expect(lengthOf({ items })).toBe(3);
    expect(lengthOf({ items })).toBe(3); // another wrapper, the same key
    expect(calls).toBe(1);
    expect(lengthOf({ items: [1] })).toBe(1);
    expect(calls).toBe(2);
  });

  it('caches undefined and null results too', () => {
    let calls = 0;
    const none = weakMemo(
      (k: object) => k,
      () => {
        calls++;
        return undefined;
      },
    );
    const k = {};
    none(k);
    none(k);
    expect(calls).toBe(1);
  });
});

describe('LruCache', () => {
  it('keeps the most recent `capacity` entries; a hit makes its entry the most recent', () => {
    const c = new LruCache<string, number>(2);
    const made: string[] = [];
    const get = (k: string) =>
      c.getOrCompute(k, () => {
        made.push(k);
        return k.length;
      });
    get('a');
    get('bb');
    get('a'); // hit: 'a' is now the most recent
    get('ccc'); // evicts 'bb'
    expect([...c.keys()]).toEqual(['a', 'ccc']);
    expect(c.size).toBe(2);
    get('bb');
    expect(made).toEqual(['a', 'bb', 'ccc', 'bb']);
  });

  it('refuses a capacity below 1 or not an integer, naming it', () => {
    expect(() => new LruCache(0)).toThrow('LruCache capacity must be an integer ≥ 1, got 0');
    expect(() => new LruCache(1.5)).toThrow(RangeError);
  });
});

describe('lruMemo', () => {
  it('recomputes when the key changes and again once an entry was evicted', () => {
    const seen: number[] = [];
    const sq = lruMemo(
      1,
      (x: number) => String(x),
      (x: number) => {
        seen.push(x);
        return x * x;
      },
    );
    expect([sq(3), sq(3), sq(4), sq(3)]).toEqual([9, 9, 16, 9]);
    expect(seen).toEqual([3, 4, 3]);
  });
});
