// RankComm on real Node worker_threads: exact all-gather, rank-order (direct) and ring-order (ring)
// reduce-scatter against independent f32 references, bucketing invariance, and the safety paths
// (descriptor mismatch, missing rank, abort, oversize data) ending in errors, never hangs.

import { afterAll, describe, expect, it } from 'vitest';
import { AG_PARITY_MAX_BYTES } from '../../../src/runtime/comm/direct';
import { LATENCY_AREA_BYTES } from '../../../src/runtime/comm/layout';
import type { RankStep } from '../../../src/runtime/comm/node';
import { bitsOf, closePool, outputs, rankOrder, reduceChunkRef, ringOrder, runScenario, seededF32 } from './harness';

afterAll(closePool);

/** Index of the first element whose bits differ; −1 when equal, −2 when the lengths differ (fast on big arrays). */
const firstDiff = (a: Float32Array, b: Float32Array): number => {
  if (a.length !== b.length) return -2;
  const x = bitsOf(a);
  const y = bitsOf(b);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return i;
  return -1;
};

const WORLD_SIZES = [2, 4, 8] as const;
const ALGORITHMS = ['direct', 'ring'] as const;

const concat = (parts: readonly Float32Array[]): Float32Array => {
  const out = new Float32Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

describe('RankComm.allGather', () => {
  for (const algorithm of ALGORITHMS) {
    for (const n of WORLD_SIZES) {
      it(`returns every rank's shard in rank order on ${n} ranks (${algorithm})`, async () => {
        const shard = 37;
        const inputs = Array.from({ length: n }, (_, r) => seededF32(shard, 100 + r));
        const steps = inputs.map((input): RankStep[] => [
          { op: 'all_gather', label: 'ag0', tensors: ['layers.0.attention.wq.weight'], input },
          { op: 'all_gather', label: 'ag1', tensors: ['layers.0.attention.wq.weight'], input: input.map((x) => -x) },
        ]);
        const out = await runScenario({ worldSize: n, maxElemsPerRank: shard + 5, algorithm, steps }); // slack: shard < slot
        const want0 = concat(inputs);
        const want1 = concat(inputs.map((x) => x.map((v) => -v)));
        for (const o of outputs(out, 0)) expect(bitsOf(o)).toEqual(bitsOf(want0));
        for (const o of outputs(out, 1)) expect(bitsOf(o)).toEqual(bitsOf(want1)); // buffer reuse is safe
      });
    }
  }
});

describe('RankComm.reduceScatter', () => {
  for (const n of WORLD_SIZES) {
    for (const reduce of ['sum', 'avg'] as const) {
      it(`matches the rank-order f32 reference bit for bit on ${n} ranks (direct, ${reduce})`, async () => {
        const chunk = 53;
        const inputs = Array.from({ length: n }, (_, r) => seededF32(n * chunk, 7 * n + r, 10));
        const steps = inputs.map((input): RankStep[] => [
          { op: 'reduce_scatter', label: 'rs', tensors: ['g'], input, reduce },
        ]);
        const out = outputs(await runScenario({ worldSize: n, maxElemsPerRank: chunk, steps }), 0);
        out.forEach((o, r) =>
          expect(bitsOf(o)).toEqual(bitsOf(reduceChunkRef(inputs, r, rankOrder(n), reduce === 'avg'))),
        );
      });
    }

    it(`sums in ring order (bit-exact) and within f32 tolerance of the exact sum on ${n} ranks (ring)`, async () => {
      const chunk = 41;
      const inputs = Array.from({ length: n }, (_, r) => seededF32(n * chunk, 31 * n + r, 10));
      const steps = inputs.map((input): RankStep[] => [
        { op: 'reduce_scatter', label: 'rs', tensors: ['g'], input, reduce: 'sum' },
        { op: 'reduce_scatter', label: 'rs', tensors: ['g'], input, reduce: 'avg' },
      ]);
      const res = await runScenario({ worldSize: n, maxElemsPerRank: chunk, algorithm: 'ring', steps });
      const sums = outputs(res, 0);
      const avgs = outputs(res, 1);
      sums.forEach((o, r) => {
        expect(bitsOf(o)).toEqual(bitsOf(reduceChunkRef(inputs, r, ringOrder(n, r), false)));
        expect(bitsOf(avgs[r])).toEqual(bitsOf(reduceChunkRef(inputs, r, ringOrder(n, r), true)));
        for (let j = 0; j < chunk; j++) {
          let exact = 0; // f64, for the tolerance check only
          let mag = 0;
          for (let q = 0; q < n; q++) {
            exact += inputs[q][r * chunk + j];
            mag += Math.abs(inputs[q][r * chunk + j]);
          }
          expect(Math.abs(o[j] - exact)).toBeLessThanOrEqual(1e-6 + mag * n * 2 ** -23);
        }
      });
    });
  }

  it('gives different bits with ring than with direct on a crafted input (torchtitan #2042)', async () => {
    // Chunk 0 holds [1, 1e8, -1e8, 0] on ranks 0..3. Direct: ((1 + 1e8) − 1e8) + 0 = 0, since 1 is
    // lost next to 1e8 in f32. Ring for chunk 0 starts at rank 1: ((1e8 − 1e8) + 0) + 1 = 1.
    const n = 4;
    const chunk0 = [1, 1e8, -1e8, 0];
    const inputs = chunk0.map((v) => new Float32Array([v, 0, 0, 0]));
    const steps = inputs.map((input): RankStep[] => [
      { op: 'reduce_scatter', label: 'rs', tensors: ['g'], input, reduce: 'sum' },
    ]);
    const direct = outputs(await runScenario({ worldSize: n, maxElemsPerRank: 1, algorithm: 'direct', steps }), 0);
    const ring = outputs(await runScenario({ worldSize: n, maxElemsPerRank: 1, algorithm: 'ring', steps }), 0);
    expect(direct[0][0]).toBe(0);
    expect(ring[0][0]).toBe(1);
    expect(bitsOf(ring[0])).not.toEqual(bitsOf(direct[0]));
  });

  for (const algorithm of ALGORITHMS) {
    it(`gives a bucket of three tensors the same bits as three separate collectives (${algorithm})`, async () => {
      const n = 4;
      const sizes = [5, 12, 3]; // per-rank chunk of each member tensor
      const names = ['layers.0.attention.wq.weight', 'layers.0.attention.wk.weight', 'layers.0.attention_norm.weight'];
      const grads = Array.from({ length: n }, (_, r) => sizes.map((c, t) => seededF32(n * c, 1000 + 10 * r + t, 3)));
      // Bucket input: chunk q = member shards for rank q concatenated (rank-major).
      const bucketInput = (r: number): Float32Array =>
        concat(
          Array.from({ length: n }, (_, q) =>
            concat(grads[r].map((g, t) => g.subarray(q * sizes[t], (q + 1) * sizes[t]))),
          ),
        );
      const total = sizes.reduce((a, b) => a + b, 0);
      const steps = grads.map((gs, r): RankStep[] => [
        ...gs.map(
          (g, t): RankStep => ({ op: 'reduce_scatter', label: names[t], tensors: [names[t]], input: g, reduce: 'avg' }),
        ),
        { op: 'reduce_scatter', label: 'bucket', tensors: names, input: bucketInput(r), reduce: 'avg' },
      ]);
      const res = await runScenario({ worldSize: n, maxElemsPerRank: total, algorithm, steps });
      const separate = [0, 1, 2].map((i) => outputs(res, i));
      const bucket = outputs(res, 3);
      for (let r = 0; r < n; r++) expect(bitsOf(bucket[r])).toEqual(bitsOf(concat(separate.map((s) => s[r]))));
    });
  }
});

describe('RankComm buffer reuse', () => {
  for (const algorithm of ALGORITHMS) {
    it(`gives exact results over interleaved all-gathers, reduce-scatters and barriers with a straggler (${algorithm})`, async () => {
      // A fast rank publishes the next collective's data while a slow one still reads the previous
      // one (direct: gather areas by seq parity, a done wait before a reduce-scatter overwrites).
      const n = 4;
      const m = 29;
      const ag = (k: number): Float32Array[] =>
        Array.from({ length: n }, (_, r) => seededF32(m - (k % 3), 500 + 10 * k + r));
      const rs = (k: number): Float32Array[] =>
        Array.from({ length: n }, (_, r) => seededF32(n * (m - k), 900 + 10 * k + r, 5));
      const plan = ['ag', 'ag', 'rs', 'ag', 'rs', 'rs', 'barrier', 'ag', 'ag', 'rs', 'ag'] as const;
      const steps = Array.from({ length: n }, (_, r): RankStep[] =>
        plan.flatMap((kind, k): RankStep[] => {
          const pause: RankStep[] = r === k % n ? [{ op: 'sleep', ms: 15 }] : [];
          if (kind === 'ag') return [...pause, { op: 'all_gather', label: `ag${k}`, tensors: ['w'], input: ag(k)[r] }];
          if (kind === 'rs')
            return [
              ...pause,
              { op: 'reduce_scatter', label: `rs${k}`, tensors: ['g'], input: rs(k)[r], reduce: 'sum' },
            ];
          return [...pause, { op: 'barrier', label: `b${k}` }];
        }),
      );
      const res = await runScenario({ worldSize: n, maxElemsPerRank: m, algorithm, steps });
      for (const o of res) if (o.error) throw new Error(`rank ${o.rank}: ${o.error.message}`);
      plan.forEach((kind, k) => {
        if (kind === 'barrier') return;
        res.forEach((o) => {
          const out = o.results.filter((x) => x.op !== 'sleep')[k].output;
          const want =
            kind === 'ag'
              ? concat(ag(k))
              : reduceChunkRef(rs(k), o.rank, algorithm === 'ring' ? ringOrder(n, o.rank) : rankOrder(n), false);
          expect(bitsOf(out ?? new Float32Array(0)), `${kind}${k} rank ${o.rank}`).toEqual(bitsOf(want));
        });
      });
    });
  }
});

describe('RankComm large all-gathers', () => {
  it('gives exact results when gathers above AG_PARITY_MAX_BYTES (one area, done wait) mix with small ones and reduce-scatters', async () => {
    const n = 2;
    const big = AG_PARITY_MAX_BYTES / 4 / n + 3; // n·c·4 just over the limit
    const small = 5;
    const shards = (len: number, k: number): Float32Array[] =>
      Array.from({ length: n }, (_, r) => seededF32(len, 70 + 10 * k + r));
    const plan: { kind: 'ag' | 'rs'; len: number }[] = [
      { kind: 'ag', len: big },
      { kind: 'ag', len: big },
      { kind: 'ag', len: small },
      { kind: 'ag', len: big },
      { kind: 'rs', len: n * small },
      { kind: 'ag', len: big },
    ];
    const steps = Array.from({ length: n }, (_, r): RankStep[] =>
      plan.flatMap(({ kind, len }, k): RankStep[] => [
        ...(r === k % n ? [{ op: 'sleep', ms: 20 } as const] : []),
        kind === 'ag'
          ? { op: 'all_gather', label: `ag${k}`, tensors: ['w'], input: shards(len, k)[r] }
          : { op: 'reduce_scatter', label: `rs${k}`, tensors: ['g'], input: shards(len, k)[r], reduce: 'sum' },
      ]),
    );
    const res = await runScenario({ worldSize: n, maxElemsPerRank: big, steps, timeoutMs: 20_000 });
    for (const o of res) if (o.error) throw new Error(`rank ${o.rank}: ${o.error.message}`);
    plan.forEach(({ kind, len }, k) => {
      res.forEach((o) => {
        const out = o.results.filter((x) => x.op !== 'sleep')[k].output ?? new Float32Array(0);
        const want =
          kind === 'ag' ? concat(shards(len, k)) : reduceChunkRef(shards(len, k), o.rank, rankOrder(n), false);
        expect(firstDiff(out, want), `${kind}${k} rank ${o.rank}`).toBe(-1);
      });
    });
  }, 60_000);
});

describe('RankComm latency path', () => {
  it('gives exact results when small reduce-scatters (latency areas by parity, no done wait) interleave with region collectives on 3 ranks', async () => {
    const n = 3;
    const lat = LATENCY_AREA_BYTES / 4;
    const agBig = Math.floor(lat / n) + 7; // gathered n·c just over a latency area
    const rsBig = Math.floor(lat / (n * n)) + 5; // n·n·c just over
    const plan: { kind: 'ag' | 'rs'; c: number }[] = [
      { kind: 'ag', c: 1000 },
      { kind: 'rs', c: 999 },
      { kind: 'rs', c: rsBig },
      { kind: 'rs', c: 17 },
      { kind: 'ag', c: agBig },
      { kind: 'ag', c: 3 },
      { kind: 'rs', c: rsBig },
      { kind: 'rs', c: rsBig },
      { kind: 'ag', c: 512 },
      { kind: 'ag', c: agBig },
      { kind: 'ag', c: agBig },
      { kind: 'rs', c: 640 },
      { kind: 'ag', c: 1 },
    ];
    const memo = new Map<string, Float32Array[]>();
    const shards = (len: number, k: number): Float32Array[] => {
      const key = `${len}/${k}`;
      let v = memo.get(key);
      if (v === undefined)
        memo.set(key, (v = Array.from({ length: n }, (_, r) => seededF32(len, 300 + 10 * k + r, 1 + k))));
      return v;
    };
    // A different rank is late to each collective: the others run ahead into the next one while it still reads.
    const steps = Array.from({ length: n }, (_, r): RankStep[] =>
      plan.flatMap(({ kind, c }, k): RankStep[] => [
        ...(r === k % n ? [{ op: 'sleep', ms: 5 } as const] : []),
        kind === 'ag'
          ? { op: 'all_gather', label: `ag${k}`, tensors: ['w'], input: shards(c, k)[r] }
          : { op: 'reduce_scatter', label: `rs${k}`, tensors: ['g'], input: shards(n * c, k)[r], reduce: 'avg' },
      ]),
    );
    const res = await runScenario({ worldSize: n, maxElemsPerRank: agBig, steps, timeoutMs: 20_000 });
    for (const o of res) if (o.error) throw new Error(`rank ${o.rank}: ${o.error.message}`);
    plan.forEach(({ kind, c }, k) => {
      const ins = kind === 'ag' ? shards(c, k) : shards(n * c, k);
      res.forEach((o) => {
        const out = o.results.filter((x) => x.op !== 'sleep')[k].output ?? new Float32Array(0);
        const want = kind === 'ag' ? concat(ins) : reduceChunkRef(ins, o.rank, rankOrder(n), true);
        expect(firstDiff(out, want), `${kind}${k} (c=${c}) rank ${o.rank}`).toBe(-1);
      });
    });
  }, 60_000);
});

describe('RankComm safety', () => {
  it('throws the same mismatch error naming both ranks, the seq and both descriptors on every rank', async () => {
    const n = 4;
    const steps = Array.from({ length: n }, (_, r): RankStep[] => [
      { op: 'barrier', label: 'start' },
      r === 3
        ? { op: 'all_gather', label: 'b', tensors: ['wq', 'wk'], input: new Float32Array(2048) }
        : { op: 'all_gather', label: 'a', tensors: ['layers.0.attention.wq.weight'], input: new Float32Array(1024) },
    ]);
    const res = await runScenario({ worldSize: n, maxElemsPerRank: 2048, steps, timeoutMs: 500 });
    for (const o of res) {
      expect(o.results).toHaveLength(1); // the barrier passed
      expect(o.error?.code).toBe('collective_mismatch');
      expect(o.error?.message).toContain(
        'collective mismatch at seq 1: rank 0 all_gather(4096 elems, [layers.0.attention.wq.weight]) vs rank 3 all_gather(8192 elems, [wq, wk])',
      );
    }
  });

  it('flags a changed tensor list under a label already used (descriptors are cached per request)', async () => {
    const ag = (tensors: string[]): RankStep => ({
      op: 'all_gather',
      label: 'bucket0',
      tensors,
      input: new Float32Array(2),
    });
    const steps = [0, 1].map((r): RankStep[] => [ag(['a']), ag(['a']), ag(r === 0 ? ['a'] : ['c'])]);
    const res = await runScenario({ worldSize: 2, maxElemsPerRank: 2, steps, timeoutMs: 2_000 });
    for (const o of res) {
      expect(o.results).toHaveLength(2);
      expect(o.error?.message).toMatch(
        /seq 2: rank 0 all_gather\(4 elems, \[a\]\) vs rank 1 all_gather\(4 elems, \[c\]\)/,
      );
    }
  });

  it('flags a different tensor list with the same size as a mismatch', async () => {
    const steps = [0, 1].map((r): RankStep[] => [
      {
        op: 'reduce_scatter',
        label: 'rs',
        tensors: r === 0 ? ['a', 'b'] : ['b', 'a'],
        input: new Float32Array(4),
        reduce: 'sum',
      },
    ]);
    const res = await runScenario({ worldSize: 2, maxElemsPerRank: 2, steps, timeoutMs: 500 });
    for (const o of res)
      expect(o.error?.message).toMatch(
        /seq 0: rank 0 reduce_scatter\(4 elems, \[a, b\]\) vs rank 1 reduce_scatter\(4 elems, \[b, a\]\)/,
      );
  });

  it('times out naming the rank that never arrives, its seq and op, on every other rank', async () => {
    const n = 4;
    const steps = Array.from({ length: 3 }, (): RankStep[] => [
      { op: 'all_gather', label: 'ag', tensors: ['w'], input: new Float32Array(8) },
    ]); // rank 3 gets no steps
    const res = await runScenario({ worldSize: n, maxElemsPerRank: 8, steps, timeoutMs: 500 });
    expect(res[3].error).toBeUndefined();
    for (const o of res.slice(0, 3)) {
      expect(['collective_timeout', 'collective_aborted']).toContain(o.error?.code);
      expect(o.error?.message).toMatch(
        /collective timeout at seq 0: rank \d waited 500 ms in all_gather\(32 elems, \[w\]\) 'ag' for ranks? [\d, ]*\b3\b/,
      );
      expect(o.error?.message).toContain('never arrived');
    }
  });

  it('lets a straggler shorter than the timeout through', async () => {
    const steps = [0, 1].map((r): RankStep[] => [
      ...(r === 1 ? [{ op: 'sleep', ms: 150 } as const] : []),
      { op: 'all_gather', label: 'ag', tensors: ['w'], input: new Float32Array([r]) },
    ]);
    const res = await runScenario({ worldSize: 2, maxElemsPerRank: 1, steps, timeoutMs: 2_000 });
    expect(Array.from(res[0].results[0].output ?? [])).toEqual([0, 1]);
    expect(Array.from(res[1].results[1].output ?? [])).toEqual([0, 1]);
  });

  for (const algorithm of ALGORITHMS) {
    it(`wakes every waiting rank with the aborting rank and reason (${algorithm})`, async () => {
      const n = 4;
      const steps = Array.from({ length: n }, (_, r): RankStep[] => [
        { op: 'barrier', label: 'start' },
        r === 2
          ? { op: 'abort', reason: 'loss is NaN at step 3' }
          : { op: 'reduce_scatter', label: 'rs', tensors: ['g'], input: new Float32Array(n), reduce: 'sum' },
      ]);
      // A long timeout: only the abort can end this scenario with 'collective_aborted'.
      const res = await runScenario({ worldSize: n, maxElemsPerRank: 1, algorithm, steps, timeoutMs: 20_000 });
      expect(res[2].error).toBeUndefined();
      for (const o of res.filter((x) => x.rank !== 2)) {
        expect(o.error?.code).toBe('collective_aborted');
        expect(o.error?.message).toMatch(
          /^collective aborted by rank 2 \(rank \d was in reduce_scatter.*\): loss is NaN at step 3$/,
        );
        expect(o.elapsedMs).toBeLessThan(10_000);
      }
    });
  }

  it('rejects data larger than the buffer with the sizes, and aborts the other ranks', async () => {
    const steps = [0, 1].map((r): RankStep[] => [
      { op: 'all_gather', label: 'big', tensors: ['w'], input: new Float32Array(r === 0 ? 9 : 8) },
    ]);
    const res = await runScenario({ worldSize: 2, maxElemsPerRank: 8, steps, timeoutMs: 20_000 });
    expect(res[0].error?.code).toBe('collective_shape');
    expect(res[0].error?.message).toContain(
      "all_gather 'big' on rank 0: shard (input) of 9 elems (36 bytes) exceeds the data buffer's per-rank shard of 8 elems (32 bytes; data buffer 384 bytes for 2 ranks)",
    );
    expect(res[1].error?.code).toBe('collective_aborted');
    expect(res[1].error?.message).toContain('collective aborted by rank 0');
  });
});
