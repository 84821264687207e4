// CPU reference causal self-attention and its backward (the spec for shaders/attention.wgsl);
// follows llm.c attention_forward_cpu / attention_backward_cpu, with a saved logsumexp instead
// of the full probability matrix (FlashAttention's bookkeeping).
// Layouts: q/o/dO [batch·seq, H·hd]; k/v [batch·seq, KVH·hd]; lse [(b·H + h)·seq + i].
// GQA: head h reads kv head floor(h·KVH/H). Scale 1/sqrt(hd).
//   s_ij = scale·q_i·k_j (j ≤ i);  P_ij = exp(s_ij − lse_i);  o_i = Σ_j P_ij v_j
//   D_i = dO_i·o_i;  dS_ij = P_ij (dO_i·v_j − D_i);  dq_i = scale Σ_j dS_ij k_j
//   dk_j = scale Σ_{h→kv, i≥j} dS_ij q_i;  dv_j = Σ_{h→kv, i≥j} P_ij dO_i
import type { AttentionDims } from './attrs';
import type { FArr } from './cpu_types';

/** Index helpers shared with the GPU host code and tests. */
export function attentionIndex(d: AttentionDims) {
  const qRow = d.heads * d.headDim;
  const kvRow = d.kvHeads * d.headDim;
  return {
    kvHead: (h: number) => Math.floor((h * d.kvHeads) / d.heads),
    q: (b: number, i: number, h: number) => (b * d.seq + i) * qRow + h * d.headDim, // q, o, dO
    kv: (b: number, j: number, g: number) => (b * d.seq + j) * kvRow + g * d.headDim, // k, v
    lse: (b: number, h: number, i: number) => (b * d.heads + h) * d.seq + i,
  };
}

function dot(x: FArr, xo: number, y: FArr, yo: number, n: number): number {
  let s = 0;
  for (let t = 0; t < n; t++) s += x[xo + t] * y[yo + t];
  return s;
}

export function attention(q: FArr, k: FArr, v: FArr, o: FArr, lse: FArr, d: AttentionDims): void {
  const ix = attentionIndex(d);
  const hd = d.headDim;
  const scale = 1 / Math.sqrt(hd);
  const s = new Float64Array(d.seq);
  for (let b = 0; b < d.batch; b++) {
    for (let h = 0; h < d.heads; h++) {
      const g = ix.kvHead(h);
      for (let i = 0; i < d.seq; i++) {
        const qo = ix.q(b, i, h);
        let mx = -Infinity;
        for (let j = 0; j <= i; j++) {
          s[j] = scale * dot(q, qo, k, ix.kv(b, j, g), hd);
          mx = Math.max(mx, s[j]);
        }
        let sum = 0;
        for (let j = 0; j <= i; j++) sum += Math.exp(s[j] - mx);
        const l = mx + Math.log(sum);
        lse[ix.lse(b, h, i)] = l;
        for (let t = 0; t < hd; t++) {
          let acc = 0;
          for (let j = 0; j <= i; j++) acc += Math.exp(s[j] - l) * v[ix.kv(b, j, g) + t];
          o[qo + t] = acc;
        }
      }
    }
  }
}

export function attentionBwd(
  dO: FArr,
  q: FArr,
  k: FArr,
  v: FArr,
  o: FArr,
  lse: FArr,
  dq: FArr,
  dk: FArr,
  dv: FArr,
  d: AttentionDims,
): void {
  const ix = attentionIndex(d);
  const hd = d.headDim;
  const scale = 1 / Math.sqrt(hd);
  dq.fill(0, 0, d.batch * d.seq * d.heads * hd);
  dk.fill(0, 0, d.batch * d.seq * d.kvHeads * hd);
  dv.fill(0, 0, d.batch * d.seq * d.kvHeads * hd);
  for (let b = 0; b < d.batch; b++) {
    for (let h = 0; h < d.heads; h++) {
      const g = ix.kvHead(h);
      for (let i = 0; i < d.seq; i++) {
        const qo = ix.q(b, i, h);
        const l = lse[ix.lse(b, h, i)];
        const Di = dot(dO, qo, o, qo, hd);
        for (let j = 0; j <= i; j++) {
          const ko = ix.kv(b, j, g);
          const p = Math.exp(scale * dot(q, qo, k, ko, hd) - l);
          const dS = p * (dot(dO, qo, v, ko, hd) - Di);
          for (let t = 0; t < hd; t++) {
            dq[qo + t] += scale * dS * k[ko + t];
            dk[ko + t] += scale * dS * q[qo + t];
            dv[ko + t] += p * dO[qo + t];
          }
        }
      }
    }
  }
}
