// RankComm.allToAll on real Node worker_threads: exact against an independent reference (each
// rank's output is the slices the others addressed to it, in rank order) on 2, 4 and 8 ranks,
// with uneven and zero-size splits, interleaved with the other collectives on both algorithms;
// and mismatched split sizes ending in the same error on every rank, never a hang.

import { afterAll, describe, expect, it } from 'vitest';
import type { RankStep } from '../../../src/runtime/comm/node';
import { bitsOf, closePool, outputs, rankOrder, reduceChunkRef, runScenario, seededF32 } from './harness';

afterAll(closePool);

/** splits[i][j]: elements rank i sends to rank j; seeded, uneven, about a third of them zero. */
function seededSplits(n: number, seed: number, max: number): number[][] {
  const u = seededF32(n * n, seed);
  return Array.from({ length: n }, (_, i) =>
    Array.from({ length: n }, (_, j) => {
      const x = Math.abs(u[i * n + j]);
      return x < 0.33 ? 0 : Math.ceil(x * max);
    }),
  );
}

const column = (splits: readonly number[][], j: number): number[] => splits.map((row) => row[j]);
const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

/** Rank r's expected output: from each rank q in order, q's slice addressed to r. */
function allToAllRef(inputs: readonly Float32Array[], splits: readonly number[][], r: number): Float32Array {
  const out: number[] = [];
  inputs.forEach((input, q) => {
    const offset = sum(splits[q].slice(0, r));
    out.push(...input.subarray(offset, offset + splits[q][r]));
  });
  return new Float32Array(out);
}

function a2aStep(label: string, input: Float32Array, splits: readonly number[][], r: number): RankStep {
  return { op: 'all_to_all', label, tensors: ['tokens'], input, sendSplits: splits[r], recvSplits: column(splits, r) };
}

describe('RankComm.allToAll', () => {
  for (const n of [2, 4, 8]) {
    it(`delivers every rank's slices exactly, uneven and zero-size splits, on ${n} ranks`, async () => {
      const plans = [seededSplits(n, 11 * n, 40), seededSplits(n, 13 * n, 9)];
      const inputs = plans.map((splits, k) => splits.map((row, r) => seededF32(sum(row), 100 * k + r)));
      const steps = Array.from({ length: n }, (_, r) =>
        plans.map((splits, k) => a2aStep(`a2a${k}`, inputs[k][r], splits, r)),
      );
      const maxRow = Math.max(...plans.flat().map(sum));
      const res = await runScenario({ worldSize: n, maxElemsPerRank: Math.ceil(maxRow / n), steps });
      plans.forEach((splits, k) =>
        outputs(res, k).forEach((o, r) => {
          expect(o.length, `a2a${k} rank ${r}`).toBe(sum(column(splits, r)));
          expect(bitsOf(o)).toEqual(bitsOf(allToAllRef(inputs[k], splits, r)));
        }),
      );
    });
  }

  it('sends nothing when every split is zero and copies its own slice on one rank', async () => {
    const none = (r: number): RankStep[] => [
      a2aStep(
        'none',
        new Float32Array(0),
        [
          [0, 0],
          [0, 0],
        ],
        r,
      ),
    ];
    const empty = await runScenario({ worldSize: 2, maxElemsPerRank: 1, steps: [none(0), none(1)] });
    for (const o of outputs(empty, 0)) expect(o.length).toBe(0);
    const input = seededF32(7, 3);
    const solo = await runScenario({ worldSize: 1, maxElemsPerRank: 0, steps: [[a2aStep('solo', input, [[7]], 0)]] });
    expect(bitsOf(outputs(solo, 0)[0])).toEqual(bitsOf(input));
  });

  for (const algorithm of ['direct', 'ring'] as const) {
    it(`stays exact interleaved with all-gathers and reduce-scatters and a straggler (${algorithm})`, async () => {
      // The all-to-all writes every region before its barrier: it must wait for the previous collective's readers.
      const n = 4;
      const m = 24;
      const plan = ['ag', 'a2a', 'a2a', 'rs', 'a2a', 'ag', 'a2a'] as const;
      const splits = plan.map((_, k) => seededSplits(n, 50 + k, m / 2));
      const data = plan.map((kind, k) =>
        Array.from({ length: n }, (_, r) =>
          seededF32(kind === 'ag' ? m : kind === 'rs' ? n * m : sum(splits[k][r]), 700 + 10 * k + r),
        ),
      );
      const steps = Array.from({ length: n }, (_, r): RankStep[] =>
        plan.flatMap((kind, k): RankStep[] => [
          ...(r === k % n ? [{ op: 'sleep', ms: 10 } as const] : []),
          kind === 'ag'
            ? { op: 'all_gather', label: `ag${k}`, tensors: ['w'], input: data[k][r] }
            : kind === 'rs'
              ? { op: 'reduce_scatter', label: `rs${k}`, tensors: ['g'], input: data[k][r], reduce: 'sum' }
              : a2aStep(`a2a${k}`, data[k][r], splits[k], r),
        ]),
      );
      const res = await runScenario({ worldSize: n, maxElemsPerRank: m, algorithm, steps });
      plan.forEach((kind, k) => {
        if (kind === 'rs' && algorithm === 'ring') return; // ring sums in another order: rank_comm.test.ts
        res.forEach((o) => {
          if (o.error) throw new Error(`rank ${o.rank}: ${o.error.message}`);
          const got = o.results.filter((x) => x.op !== 'sleep')[k].output ?? new Float32Array(0);
          const want =
            kind === 'ag'
              ? new Float32Array(data[k].flatMap((x) => [...x]))
              : kind === 'rs'
                ? reduceChunkRef(data[k], o.rank, rankOrder(n), false)
                : allToAllRef(data[k], splits[k], o.rank);
          expect(bitsOf(got), `${kind}${k} rank ${o.rank}`).toEqual(bitsOf(want));
        });
      });
    });
  }
});

describe('RankComm.allToAll safety', () => {
  it('throws the same mismatch error naming the sender, the receiver and both sizes on every rank', async () => {
    const n = 4;
    const splits = [
      [1, 3, 0, 2],
      [2, 2, 2, 2],
      [0, 0, 5, 1],
      [4, 0, 1, 1],
    ];
    const steps = Array.from({ length: n }, (_, r): RankStep[] => {
      const recv = column(splits, r);
      if (r === 1) recv[0] = 2; // rank 0 sends it 3
      return [
        { op: 'barrier', label: 'start' },
        {
          op: 'all_to_all',
          label: 'dispatch',
          tensors: ['tokens'],
          input: new Float32Array(sum(splits[r])),
          sendSplits: splits[r],
          recvSplits: recv,
        },
      ];
    });
    const res = await runScenario({ worldSize: n, maxElemsPerRank: 8, steps, timeoutMs: 2_000 });
    for (const o of res) {
      expect(o.results).toHaveLength(1);
      expect(o.error?.code).toBe('collective_mismatch');
      expect(o.error?.message).toContain(
        "all_to_all split mismatch at seq 1 'dispatch': rank 0 sends 3 elems to rank 1, which expects 2 from rank 0",
      );
    }
  });

  it('names global ranks and the group on a mesh sub-group', async () => {
    const steps = [0, 1].map((r): RankStep[] => [
      {
        op: 'all_to_all',
        label: 'dispatch',
        tensors: ['tokens'],
        input: new Float32Array(3),
        sendSplits: r === 0 ? [1, 2] : [2, 1],
        recvSplits: r === 0 ? [1, 2] : [1, 1],
      },
    ]);
    const group = { name: 'ep', ranks: [4, 6] };
    const res = await runScenario({ worldSize: 2, maxElemsPerRank: 4, steps, group, timeoutMs: 2_000 });
    for (const o of res) {
      expect(o.error?.message).toContain(
        "all_to_all split mismatch at seq 0 'dispatch' on group 'ep' (ranks 4, 6): " +
          'rank 4 sends 2 elems to rank 6, which expects 1 from rank 4',
      );
    }
  });

  it('refuses splits that do not add up to the buffer on the rank that passed them and aborts the rest', async () => {
    const steps = [0, 1].map((r): RankStep[] => [
      {
        op: 'all_to_all',
        label: 'combine',
        tensors: ['y'],
        input: new Float32Array(4),
        sendSplits: r === 0 ? [1, 2] : [2, 2],
        recvSplits: [r === 0 ? 1 : 2, 2],
      },
    ]);
    const res = await runScenario({ worldSize: 2, maxElemsPerRank: 4, steps, timeoutMs: 2_000 });
    expect(res[0].error?.code).toBe('collective_shape');
    expect(res[0].error?.message).toContain('sendSplits add up to 3 elems, but the input has 4');
    expect(res[1].error?.code).toMatch(/collective_(aborted|shape)/);
  });

  it('names the field and the index of a negative or fractional split', async () => {
    const steps = [0, 1].map((): RankStep[] => [
      {
        op: 'all_to_all',
        label: 'x',
        tensors: ['y'],
        input: new Float32Array(2),
        sendSplits: [2.5, -0.5],
        recvSplits: [1, 1],
      },
    ]);
    const res = await runScenario({ worldSize: 2, maxElemsPerRank: 4, steps, timeoutMs: 2_000 });
    expect(res.map((o) => o.error?.message).join('\n')).toContain(
      'sendSplits[0] must be an integer ≥ 0 (elements), got 2.5',
    );
  });
});
