// CPU reference matmul (the spec for shaders/matmul_*.wgsl); follows llm.c matmul_forward_cpu.
// C[M,N] = op(A)[M,K] · op(B)[K,N]; A is stored [K,M] when transA, B stored [N,K] when transB.
import type { MatmulDims } from './attrs';
import type { FArr } from './cpu_types';

/** Element strides of op(A)[m,k] and op(B)[k,n] in their stored layout. */
export function matmulStrides(d: MatmulDims) {
  return {
    aM: d.transA ? 1 : d.K,
    aK: d.transA ? d.M : 1, // A[m,k] = a[m·aM + k·aK]
    bK: d.transB ? 1 : d.N,
    bN: d.transB ? d.K : 1, // B[k,n] = b[k·bK + n·bN]
  };
}

export function matmul(a: FArr, b: FArr, c: FArr, d: MatmulDims): void {
  const s = matmulStrides(d);
  for (let m = 0; m < d.M; m++) {
    for (let n = 0; n < d.N; n++) {
      let acc = 0;
      for (let k = 0; k < d.K; k++) acc += a[m * s.aM + k * s.aK] * b[k * s.bK + n * s.bN];
      c[m * d.N + n] = acc;
    }
  }
}
