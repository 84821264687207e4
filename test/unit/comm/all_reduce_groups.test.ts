// RankComm.allReduce on real worker_threads (any length: the input is zero-padded to n chunks), and
// a communicator of a mesh sub-group naming its members by global rank and the group in errors.

import { afterAll, describe, expect, it } from 'vitest';
import type { RankStep } from '../../../src/runtime/comm/node';
import { closePool, outputs, rankOrder, reduceChunkRef, ringOrder, runScenario, seededF32 } from './harness';

afterAll(closePool);

describe('RankComm.allReduce', () => {
  for (const algorithm of ['direct', 'ring'] as const) {
    for (const n of [2, 4] as const) {
      it(`sums (and averages) 37 elements on ${n} ranks, every rank the same result (${algorithm})`, async () => {
        const len = 37; // not a multiple of n: the padding must not leak into the result
        const inputs = Array.from({ length: n }, (_, r) => seededF32(len, 7 + r));
        for (const reduce of ['sum', 'avg'] as const) {
          const steps = inputs.map((input): RankStep[] => [
            { op: 'all_reduce', label: 'g', tensors: ['g'], input, reduce },
          ]);
          const res = await runScenario({ worldSize: n, maxElemsPerRank: Math.ceil(len / n), algorithm, steps });
          const out = outputs(res, 0);
          // the reference: the same padded reduce-scatter, each chunk summed in the algorithm's order
          const chunk = Math.ceil(len / n);
          const padded = inputs.map((x) => {
            const p = new Float32Array(n * chunk);
            p.set(x);
            return p;
          });
          const want = new Float32Array(n * chunk);
          for (let r = 0; r < n; r++) {
            const order = algorithm === 'direct' ? rankOrder(n) : ringOrder(n, r);
            want.set(reduceChunkRef(padded, r, order, reduce === 'avg'), r * chunk);
          }
          for (let r = 0; r < n; r++) expect([...out[r]]).toEqual([...want.subarray(0, len)]);
        }
      });
    }
  }
});

describe('RankComm on a mesh sub-group', () => {
  it("names the group and the members' global ranks in a mismatch", async () => {
    const steps = [0, 1].map((r): RankStep[] => [
      { op: 'all_gather', label: 'x', tensors: [r === 0 ? 'a' : 'b'], input: new Float32Array(2) },
    ]);
    const group = { name: 'tp', ranks: [2, 3] };
    const res = await runScenario({ worldSize: 2, maxElemsPerRank: 2, steps, timeoutMs: 2_000, group });
    for (const o of res) {
      expect(o.error?.code).toBe('collective_mismatch');
      expect(o.error?.message).toMatch(
        /^collective mismatch at seq 0 on group 'tp' \(ranks 2, 3\): rank 2 all_gather\(4 elems, \[a\]\) vs rank 3 /,
      );
    }
  });

  it('names the missing member by global rank when it never arrives', async () => {
    const steps = [[{ op: 'barrier', label: 'b' }] as RankStep[]];
    const group = { name: 'dp_shard', ranks: [1, 5] };
    const res = await runScenario({ worldSize: 2, maxElemsPerRank: 1, steps, timeoutMs: 300, group });
    expect(res[0].error?.message).toMatch(
      /rank 1 waited 300 ms in barrier.* on group 'dp_shard' \(ranks 1, 5\) for rank 5, which never arrived/,
    );
  });
});
