// Data structures under the autobucketing port, each against a brute-force reference.
import { describe, expect, it } from 'vitest';
import { AugmentedGraph } from '../../../src/backends/autobucketing/aug_graph';
import { PrefetchBudget } from '../../../src/backends/autobucketing/budget';
import { anyEnclosed } from '../../../src/backends/autobucketing/timeline';
import { TupleHeap } from '../../../src/backends/heap';
import { rng } from './helpers';

describe('TupleHeap', () => {
  it('pops entries in lexicographic (k0, k1, k2, value) order', () => {
    const r = rng(1);
    const h = new TupleHeap();
    const ref: number[][] = [];
    for (let i = 0; i < 500; i++) {
      const e = [Math.floor(r() * 5), Math.floor(r() * 3) - 1, Math.floor(r() * 50), i];
      ref.push(e);
      h.push(e[0], e[1], e[2], e[3]);
    }
    ref.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2] || a[3] - b[3]);
    expect(Array.from({ length: 500 }, () => h.pop())).toEqual(ref.map((e) => e[3]));
    expect(h.size).toBe(0);
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

describe('anyEnclosed', () => {
  it('matches the pairwise check', () => {
    const r = rng(3);
    for (let t = 0; t < 200; t++) {
      const pairs = (k: number) => Array.from({ length: k }, () => {
        const a = Math.floor(r() * 30);
        return [a, a + 1 + Math.floor(r() * 10)];
      }).flat();
      const hid = pairs(Math.floor(r() * 6));
      const exec = pairs(Math.floor(r() * 6));
      let brute = false;
      for (let h = 0; h < hid.length; h += 2) for (let x = 0; x < exec.length; x += 2) if (exec[x] < hid[h] && hid[h + 1] < exec[x + 1]) brute = true;
      expect(anyEnclosed(hid, exec)).toBe(brute);
    }
  });
});

describe('AugmentedGraph', () => {
  // random DAG over 40 nodes in order 0..39, edges i → j for i < j
  function randomDag(seed: number) {
    const r = rng(seed);
    const n = 40;
    const preds: number[][] = Array.from({ length: n }, () => []);
    for (let j = 1; j < n; j++) for (let i = 0; i < j; i++) if (r() < 0.06) preds[j].push(i);
    const csr = (lists: number[][]) => {
      const off = new Int32Array(n + 1);
      lists.forEach((l, i) => (off[i + 1] = off[i] + l.length));
      return { off, idx: Int32Array.from(lists.flat()) };
    };
    const succs: number[][] = Array.from({ length: n }, () => []);
    preds.forEach((ps, j) => ps.forEach((i) => succs[i].push(j)));
    const p = csr(preds);
    const s = csr(succs);
    return { n, preds, r, g: new AugmentedGraph(p.off, p.idx, s.off, s.idx, Array.from({ length: n }, (_, i) => i)) };
  }

  it('merges only path-free pairs, keeps a topological order and answers hasPath like a BFS', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const { n, preds, r, g } = randomDag(seed);
      const members = Array.from({ length: n }, (_, i) => [i]);
      const setOf = Array.from({ length: n }, (_, i) => i);
      const reach = (a: number, b: number): boolean => {
        // brute force on the quotient graph
        const seen = new Set<number>([setOf[b]]);
        const stack = [setOf[b]];
        while (stack.length) {
          const x = stack.pop()!;
          for (const m of members[x]) for (const p of preds[m]) {
            const sp = setOf[p];
            if (sp === setOf[a]) return true;
            if (!seen.has(sp)) { seen.add(sp); stack.push(sp); }
          }
        }
        return false;
      };
      for (let step = 0; step < 30; step++) {
        const a = Math.floor(r() * n);
        const b = Math.floor(r() * n);
        if (setOf[a] === setOf[b]) continue;
        expect(g.hasPath(a, b)).toBe(reach(a, b));
        if (!reach(a, b) && !reach(b, a)) {
          g.merge(a, b);
          const keep = setOf[a];
          const gone = setOf[b];
          members[keep].push(...members[gone]);
          for (const m of members[gone]) setOf[m] = keep;
          members[gone] = [];
        }
      }
      // the kept order is topological for the merged graph
      const slotOf = new Map<number, number>();
      Array.from(g.slots).forEach((rep, i) => rep >= 0 && slotOf.set(g.find(rep), i));
      for (let j = 0; j < n; j++) for (const i of preds[j]) {
        if (g.find(i) !== g.find(j)) expect(slotOf.get(g.find(i))!).toBeLessThan(slotOf.get(g.find(j))!);
      }
    }
  });
});
