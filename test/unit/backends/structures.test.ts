// Data structures under the autobucketing port, each against a brute-force reference.
import { describe, expect, it } from 'vitest';
import { PrefetchBudget } from '../../../src/backends/autobucketing/budget';
import { TargetReach, withExtraParents } from '../../../src/backends/autobucketing/reach';
import { PyHeap } from '../../../src/graph/heap';
import { rng } from './helpers';

/** cpython's heapq, transcribed line by line (Lib/heapq.py), as the layout reference. */
function pyHeapq() {
  const h: number[][] = [];
  const lt = (a: number[], b: number[]) => {
    for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return a[k] < b[k];
    return false;
  };
  const siftdown = (start: number, pos: number) => {
    const item = h[pos];
    while (pos > start) {
      const pp = (pos - 1) >> 1;
      const parent = h[pp];
      if (lt(item, parent)) {
        h[pos] = parent;
        pos = pp;
        continue;
      }
      break;
    }
    h[pos] = item;
  };
  const siftup = (pos: number) => {
    const end = h.length;
    const start = pos;
    const item = h[pos];
    let child = 2 * pos + 1;
    while (child < end) {
      const right = child + 1;
      if (right < end && !lt(h[child], h[right])) child = right;
      h[pos] = h[child];
      pos = child;
      child = 2 * pos + 1;
    }
    h[pos] = item;
    siftdown(start, pos);
  };
  return {
    h,
    push: (x: number[]) => {
      h.push(x);
      siftdown(0, h.length - 1);
    },
    pop: () => {
      const last = h.pop()!;
      if (h.length === 0) return last;
      const top = h[0];
      h[0] = last;
      siftup(0);
      return top;
    },
    heapify: () => {
      for (let i = (h.length >> 1) - 1; i >= 0; i--) siftup(i);
    },
  };
}

describe('PyHeap', () => {
  it('keeps the same list layout as Python heapq through pushes, pops and removals', () => {
    const r = rng(1);
    const ours = new PyHeap();
    const ref = pyHeapq();
    for (let step = 0; step < 2000; step++) {
      const x = r();
      if (x < 0.55 || ours.size === 0) {
        const key = [Math.floor(r() * 4), Math.floor(r() * 3) - 1, step];
        ours.push(key, step);
        ref.push(key);
      } else if (x < 0.9) {
        expect(ours.pop().key).toEqual(ref.pop());
      } else {
        const picks = [...new Set([Math.floor(r() * ours.size), Math.floor(r() * ours.size)])];
        ours.removeAt(picks);
        for (const p of [...picks].sort((a, b) => b - a)) ref.h.splice(p, 1);
        ref.heapify();
      }
      expect(ours.items.map((e) => e.key)).toEqual(ref.h);
    }
  });
});

describe('PrefetchBudget', () => {
  it('answers range maxima of cum and baseline + cum like a brute-force scan', () => {
    const r = rng(2);
    const base = Array.from({ length: 37 }, () => Math.floor(r() * 100));
    const cum = new Array(37).fill(0);
    const b = new PrefetchBudget(base);
    for (let step = 0; step < 300; step++) {
      const from = Math.floor(r() * 37);
      const to = from + Math.floor(r() * (38 - from));
      if (r() < 0.5) {
        const v = Math.floor(r() * 20);
        b.add(from, to, v);
        for (let i = from; i < to; i++) cum[i] += v;
      } else if (to > from) {
        const [mc, mt] = b.query(from, to);
        expect(mc).toBe(Math.max(...cum.slice(from, to)));
        expect(mt).toBe(Math.max(...cum.slice(from, to).map((c, k) => c + base[from + k])));
      }
    }
  });
});

describe('TargetReach', () => {
  it('answers ancestor questions to and from targets like a DFS on random DAGs', () => {
    const r = rng(3);
    for (let trial = 0; trial < 20; trial++) {
      const n = 5 + Math.floor(r() * 120);
      const parents: number[][] = Array.from({ length: n }, (_, y) => {
        const ps: number[] = [];
        for (let k = 0; k < 3; k++) if (y > 0 && r() < 0.6) ps.push(Math.floor(r() * y));
        return ps;
      });
      const order = Array.from({ length: n }, (_, i) => i);
      const targets = order.filter(() => r() < 0.4);
      const csr = withExtraParents(
        n,
        new Int32Array(n + 1),
        new Int32Array(0),
        new Map(parents.map((ps, x) => [x, ps])),
      );
      const reach = new TargetReach({ n, order, ...csr }, targets);
      const searched = new TargetReach({ n, order, ...csr }, targets, 0); // bounded searches, no bitsets
      const ancestors = (y: number): Set<number> => {
        const seen = new Set<number>();
        const stack = [...parents[y]];
        while (stack.length > 0) {
          const x = stack.pop()!;
          if (seen.has(x)) continue;
          seen.add(x);
          stack.push(...parents[x]);
        }
        return seen;
      };
      const all = order.map(ancestors);
      for (const t of targets) {
        for (let x = 0; x < n; x++) {
          expect(reach.isAncestorOfTarget(x, t)).toBe(all[t].has(x));
          expect(reach.targetIsAncestorOf(t, x)).toBe(all[x].has(t));
          expect(searched.isAncestorOfTarget(x, t)).toBe(all[t].has(x));
          expect(searched.targetIsAncestorOf(t, x)).toBe(all[x].has(t));
        }
      }
    }
  });
});
