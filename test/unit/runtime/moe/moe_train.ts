// The tiny MoE regression the expert-parallel tests train, shared by the test (one rank, in
// process) and moe_rank.worker.ts (N ranks): a seeded problem, each rank's slice of it, and SGD
// steps of loss = ½·Σ_t ‖moe(x_t) − target_t‖² / T_global, the router gradient all-reduced.

import { RankComm, type CommInit } from '../../../../src/runtime/comm';
import { moeBackward, moeForward, type MoeDims, type MoeWeights } from '../../../../src/runtime/moe_layer';
import { randF32, rng } from '../../../helpers/rng';

export interface MoeProblem {
  readonly dims: MoeDims; // tokens: the global batch
  readonly weights: MoeWeights; // every expert
  readonly x: Float32Array; // [T, D]
  readonly target: Float32Array; // [T, D]
}

export interface MoeJob {
  readonly init: CommInit;
  readonly rank: number;
  readonly problem: MoeProblem;
  readonly steps: number;
  readonly lr: number;
}

export interface MoeRun {
  readonly losses: readonly number[]; // global loss before each step
  readonly y: Float32Array; // step 0 output, this rank's tokens
  readonly dx: Float32Array; // step 0 input gradient, this rank's tokens
  readonly grads: MoeWeights; // step 0 gradients: router all-reduced, this rank's experts
}

export function makeProblem(seed: number, dims: MoeDims): MoeProblem {
  const r = rng(seed);
  const { tokens: T, dim: D, hidden: F, experts: E } = dims;
  const weights = {
    router: randF32(D * E, r, 1),
    w1: randF32(E * D * F, r, 0.5),
    w3: randF32(E * D * F, r, 0.5),
    w2: randF32(E * F * D, r, 0.5),
  };
  return { dims, weights, x: randF32(T * D, r, 1), target: randF32(T * D, r, 0.5) };
}

/** Rank `rank` of `ranks`: its tokens (a contiguous slice of the batch) and its experts. */
function sliceFor(p: MoeProblem, rank: number, ranks: number) {
  const { tokens: T, dim: D, hidden: F, experts: E } = p.dims;
  const t = T / ranks,
    L = E / ranks;
  const experts = (w: Float32Array) => w.slice(rank * L * D * F, (rank + 1) * L * D * F);
  return {
    dims: { ...p.dims, tokens: t },
    weights: {
      router: p.weights.router.slice(),
      w1: experts(p.weights.w1),
      w3: experts(p.weights.w3),
      w2: experts(p.weights.w2),
    },
    x: p.x.slice(rank * t * D, (rank + 1) * t * D),
    target: p.target.slice(rank * t * D, (rank + 1) * t * D),
  };
}

export function runMoeJob(job: MoeJob): MoeRun {
  const comm = new RankComm(job.init, job.rank);
  const n = comm.worldSize;
  const { dims, weights, x, target } = sliceFor(job.problem, job.rank, n);
  const globalT = job.problem.dims.tokens;
  const losses: number[] = [];
  let first: Omit<MoeRun, 'losses'> | undefined;
  for (let step = 0; step < job.steps; step++) {
    const { y, saved } = moeForward(comm, dims, weights, x);
    const dy = new Float32Array(y.length);
    const loss = new Float32Array(1);
    for (let i = 0; i < y.length; i++) {
      dy[i] = (y[i] - target[i]) / globalT;
      loss[0] += (0.5 * (y[i] - target[i]) ** 2) / globalT;
    }
    comm.allReduce({ label: 'loss', tensors: ['loss'] }, loss, loss, 'sum');
    losses.push(loss[0]);
    const { dx, grads } = moeBackward(comm, dims, weights, saved, dy);
    comm.allReduce({ label: 'router grad', tensors: ['router'] }, grads.router, grads.router, 'sum');
    first ??= { y, dx, grads };
    for (const key of ['router', 'w1', 'w3', 'w2'] as const) {
      for (let i = 0; i < weights[key].length; i++) weights[key][i] -= job.lr * grads[key][i];
    }
  }
  if (!first) throw new Error('runMoeJob needs steps ≥ 1');
  return { losses, ...first };
}
