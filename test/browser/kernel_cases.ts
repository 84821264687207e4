// Seeded random cases for every compute op, small and with sizes that are not multiples of any
// tile or workgroup (37, 45, 23, 70…), so edges are exercised. Backward ops get forward
// intermediates (o, lse, rstd) from the CPU reference.
import { attention } from '../../src/runtime/cpu/attention';
import { rmsNorm } from '../../src/runtime/cpu/rms_norm';
import { type OpCase, randF32, randI32, rng } from './kernel_check';

export const MATMUL_SHAPES: readonly (readonly [M: number, N: number, K: number])[] = [
  [37, 45, 23], // no tile multiple anywhere
  [64, 64, 64], // exact tiles
  [1, 70, 5], // a single row, K < tile
  [66, 3, 130], // tall-thin, K spans several tiles
];

export function matmulCase(M: number, N: number, K: number, transA: boolean, transB: boolean, seed: number): OpCase {
  const r = rng(seed);
  return {
    name: `matmul ${M}×${N}×${K}${transA ? ' Aᵀ' : ''}${transB ? ' Bᵀ' : ''}`,
    op: 'matmul',
    attrs: { M, N, K, transA, transB },
    inputs: [randF32(M * K, r), randF32(K * N, r)],
    tol: [[1e-5, 1e-4]],
  };
}

export function embeddingCases(seed: number): OpCase[] {
  const r = rng(seed);
  const d = { V: 11, D: 13, T: 29 };
  const tokens = randI32(d.T, r, d.V);
  return [
    { name: 'embedding', op: 'embedding', attrs: d, inputs: [randF32(d.V * d.D, r), tokens], tol: [[0, 0]] },
    // bit-equal: both sum the same rows in ascending token order in fp32
    { name: 'embedding_bwd', op: 'embedding_bwd', attrs: d, inputs: [randF32(d.T * d.D, r), tokens], tol: [[0, 0]] },
    // a TP vocabulary slice: ids [5, 12) of 20, D over two column blocks
    ...[{ V: 7, D: 37, T: 29, vocabStart: 5 }].flatMap((s) => {
      const ids = randI32(s.T, r, 20);
      const exact: [number, number][] = [[0, 0]];
      const fwd = [randF32(s.V * s.D, r), ids];
      const bwd = [randF32(s.T * s.D, r), ids];
      return [
        { name: 'embedding (vocab slice)', op: 'embedding', attrs: s, inputs: fwd, tol: exact },
        { name: 'embedding_bwd (vocab slice)', op: 'embedding_bwd', attrs: s, inputs: bwd, tol: exact },
      ] as OpCase[];
    }),
  ];
}

export function rmsNormCases(seed: number): OpCase[] {
  const r = rng(seed);
  const cases: OpCase[] = [];
  for (const [rows, cols] of [
    [5, 37],
    [3, 200],
  ] as const) {
    const d = { rows, cols, eps: 1e-5 };
    const x = randF32(rows * cols, r, 2),
      w = randF32(cols, r);
    const y = new Float32Array(rows * cols),
      rstd = new Float32Array(rows);
    rmsNorm(x, w, y, rstd, d);
    cases.push({
      name: `rms_norm ${rows}×${cols}`,
      op: 'rms_norm',
      attrs: d,
      inputs: [x, w],
      tol: [
        [1e-5, 1e-4],
        [1e-5, 1e-4],
      ],
    });
    cases.push({
      name: `rms_norm_bwd ${rows}×${cols}`,
      op: 'rms_norm_bwd',
      attrs: d,
      inputs: [randF32(rows * cols, r), x, w, rstd],
      tol: [
        [1e-5, 1e-4],
        [1e-5, 1e-4],
      ],
    });
  }
  return cases;
}

export function swigluCases(seed: number): OpCase[] {
  const r = rng(seed);
  const n = 1000;
  const a = randF32(n, r, 4),
    b = randF32(n, r);
  return [
    { name: 'swiglu', op: 'swiglu', attrs: { n }, inputs: [a, b] },
    {
      name: 'swiglu_bwd',
      op: 'swiglu_bwd',
      attrs: { n },
      inputs: [randF32(n, r), a, b],
      tol: [
        [1e-5, 1e-4],
        [1e-5, 1e-4],
      ],
    },
  ];
}

export function attentionCases(seed: number): OpCase[] {
  const r = rng(seed);
  const cases: OpCase[] = [];
  const shapes = [
    { batch: 2, seq: 9, heads: 4, kvHeads: 2, headDim: 8 }, // GQA 2:1
    { batch: 1, seq: 70, heads: 3, kvHeads: 1, headDim: 5 }, // seq > workgroup (64), MQA
    { batch: 1, seq: 4, heads: 2, kvHeads: 2, headDim: 72 }, // headDim > workgroup
  ];
  for (const d of shapes) {
    const T = d.batch * d.seq;
    const q = randF32(T * d.heads * d.headDim, r),
      k = randF32(T * d.kvHeads * d.headDim, r);
    const v = randF32(T * d.kvHeads * d.headDim, r);
    const o = new Float32Array(q.length),
      lse = new Float32Array(d.batch * d.heads * d.seq);
    attention(q, k, v, o, lse, d);
    const tag = `b${d.batch} s${d.seq} h${d.heads}/${d.kvHeads} hd${d.headDim}`;
    cases.push({
      name: `attention ${tag}`,
      op: 'attention',
      attrs: d,
      inputs: [q, k, v],
      tol: [
        [1e-5, 1e-4],
        [1e-5, 1e-5],
      ],
    });
    cases.push({
      name: `attention_bwd ${tag}`,
      op: 'attention_bwd',
      attrs: d,
      inputs: [randF32(q.length, r), q, k, v, o, lse],
      tol: [
        [2e-5, 1e-4],
        [2e-5, 1e-4],
        [2e-5, 1e-4],
      ],
    });
  }
  return cases;
}

export function elementwiseCases(seed: number): OpCase[] {
  const r = rng(seed);
  const n = 4099;
  const ce = { T: 7, V: 100 };
  const logits = randF32(ce.T * ce.V, r, 5),
    targets = randI32(ce.T, r, ce.V);
  const adamw = { n: 333, lr: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1 };
  return [
    { name: 'add', op: 'add', attrs: { n }, inputs: [randF32(n, r), randF32(n, r)], tol: [[0, 0]] },
    { name: 'copy', op: 'copy', attrs: { n }, inputs: [randF32(n, r)], tol: [[0, 0]] },
    { name: 'cross_entropy', op: 'cross_entropy', attrs: ce, inputs: [logits, targets], tol: [[1e-5, 1e-5]] },
    { name: 'cross_entropy_bwd', op: 'cross_entropy_bwd', attrs: ce, inputs: [logits, targets], tol: [[1e-7, 1e-4]] },
    {
      name: 'adamw step 3',
      op: 'adamw',
      attrs: adamw,
      step: 3,
      inputs: [
        randF32(adamw.n, r),
        randF32(adamw.n, r),
        randF32(adamw.n, r, 0.1),
        randF32(adamw.n, r, 0.01).map(Math.abs),
      ],
      tol: [
        [1e-6, 1e-5],
        [1e-7, 1e-5],
        [1e-9, 1e-5],
      ],
    },
  ];
}
