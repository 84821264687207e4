// CPU reference MoE router (the spec for shaders/moe_router*.wgsl): per token, the top-k experts
// of softmax(logits) and their renormalised gates, and the backward to the logits.
// Selection compares logits (softmax is monotone, and logits are what both backends share bit for
// bit, so the CPU and WGSL kernels pick the same experts); ties go to the lower expert index.
// Renormalised over the chosen k, the gates are softmax over the chosen logits:
//   g_i = exp(l_{e_i}) / Σ_j exp(l_{e_j});  dl_{e_i} = g_i·(dg_i − Σ_j dg_j·g_j), other logits 0.
import { ConfigError } from '../../errors';
import type { FArr, IArr } from './cpu_types';
import { checkMoeIndex, checkMoeLength } from './moe_checks';

export interface RouterDims {
  readonly tokens: number; // T
  readonly experts: number; // E
  readonly topK: number; // k ≤ E
}

/** experts[t,i]: the i-th largest logit of token t (lower index on ties); gates[t,i]: its renormalised weight. */
export function moeRouter(logits: FArr, gates: FArr, experts: IArr, d: RouterDims): void {
  checkRouterDims(d);
  checkMoeLength('moeRouter.logits', logits, d.tokens * d.experts);
  checkMoeLength('moeRouter.gates', gates, d.tokens * d.topK);
  checkMoeLength('moeRouter.experts', experts, d.tokens * d.topK);
  for (let t = 0; t < d.tokens; t++) {
    const row = t * d.experts;
    const out = t * d.topK;
    for (let i = 0; i < d.topK; i++) experts[out + i] = nextBest(logits, row, d.experts, experts, out, i);
    const top = logits[row + experts[out]]; // the largest: exp never overflows
    let sum = 0;
    for (let i = 0; i < d.topK; i++) sum += Math.exp(logits[row + experts[out + i]] - top);
    for (let i = 0; i < d.topK; i++) gates[out + i] = Math.exp(logits[row + experts[out + i]] - top) / sum;
  }
}

/** The largest logit of the row not among the first `taken` picks; strict `>` keeps the lower index on ties. */
function nextBest(logits: FArr, row: number, numExperts: number, picks: IArr, out: number, taken: number): number {
  let best = -1;
  for (let e = 0; e < numExperts; e++) {
    if (isPicked(picks, out, taken, e)) continue;
    if (best < 0 || logits[row + e] > logits[row + best]) best = e;
  }
  return best;
}

function isPicked(picks: IArr, out: number, taken: number, e: number): boolean {
  for (let i = 0; i < taken; i++) if (picks[out + i] === e) return true;
  return false;
}

/** dLogits from dGates (zero for experts a token did not pick). */
export function moeRouterBwd(dGates: FArr, gates: FArr, experts: IArr, dLogits: FArr, d: RouterDims): void {
  checkRouterDims(d);
  checkMoeLength('moeRouterBwd.dLogits', dLogits, d.tokens * d.experts);
  checkMoeIndex('moeRouterBwd.experts', experts, d.tokens * d.topK, d.experts);
  dLogits.fill(0, 0, d.tokens * d.experts);
  for (let t = 0; t < d.tokens; t++) {
    const out = t * d.topK;
    let dot = 0;
    for (let i = 0; i < d.topK; i++) dot += dGates[out + i] * gates[out + i];
    for (let i = 0; i < d.topK; i++) {
      dLogits[t * d.experts + experts[out + i]] = gates[out + i] * (dGates[out + i] - dot);
    }
  }
}

function checkRouterDims(d: RouterDims): void {
  if (!(Number.isInteger(d.topK) && d.topK >= 1 && d.topK <= d.experts)) {
    throw new ConfigError(
      'router.topK',
      `router.topK must be an integer in [1, experts=${d.experts}], got ${JSON.stringify(d.topK)}`,
    );
  }
}
