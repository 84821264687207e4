// The MoE layer trained expert-parallel on Node worker_threads (CPU kernels): N = 2 and 4 ranks,
// each with its slice of the batch and of the experts, give the same outputs, input gradients and
// expert gradients as one rank holding every expert (bit for bit; the all-reduced router gradient
// within 1e-4), and SGD losses that fall the same way (1e-4), also when some ranks get no rows;
// and the whole layer's backward on one rank agrees with finite differences of its forward.

import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { bundledEntryUrl } from '../../../../src/runtime/bundled_entry';
import { createCommInit } from '../../../../src/runtime/comm';
import { moeBackward, moeForward, type MoeDims } from '../../../../src/runtime/moe_layer';
import { type MoeJob, type MoeRun, makeProblem, runMoeJob } from './moe_train';

const DIMS: MoeDims = { tokens: 32, dim: 8, hidden: 12, experts: 8, topK: 2 };
const STEPS = 5;
const LR = 2;

/** Room for the largest all-to-all: every local row to one rank. */
const commFor = (ranks: number) =>
  createCommInit(ranks, (DIMS.tokens / ranks) * DIMS.topK * DIMS.dim, { timeoutMs: 20_000 });

async function runOnWorkers(ranks: number, job: Omit<MoeJob, 'init' | 'rank'>): Promise<MoeRun[]> {
  const url = await bundledEntryUrl(new URL('./moe_rank.worker.ts', import.meta.url));
  const init = commFor(ranks);
  const workers = Array.from({ length: ranks }, () => new Worker(url));
  try {
    return await Promise.all(
      workers.map(
        (w, rank) =>
          new Promise<MoeRun>((resolve, reject) => {
            w.once('message', (m: { run?: MoeRun; error?: string }) =>
              m.run ? resolve(m.run) : reject(new Error(m.error)),
            );
            w.once('error', reject);
            w.postMessage({ ...job, init, rank });
          }),
      ),
    );
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** Largest |a − b| over max(1, |b|): a relative error that stays absolute near zero. */
function maxErr(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let i = 0; i < b.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]) / Math.max(1, Math.abs(b[i])));
  return worst;
}

const concat = (parts: readonly Float32Array[]) => Float32Array.from(parts.flatMap((p) => Array.from(p)));

describe('MoE layer, expert parallel', () => {
  const problem = makeProblem(2024, DIMS);
  const job = { problem, steps: STEPS, lr: LR };
  const solo = runMoeJob({ ...job, init: commFor(1), rank: 0 });

  it('routes tokens to every expert, so rows cross ranks (the test is not vacuous)', () => {
    const { saved } = moeForward({ worldSize: 1, allToAll: copyAllToAll }, DIMS, problem.weights, problem.x);
    expect(Math.min(...saved.plan.order.counts)).toBeGreaterThan(0);
    expect(solo.losses[STEPS - 1]).toBeLessThan(0.9 * solo.losses[0]);
  });

  it("still matches when every token picks rank 0's experts and the other ranks get no rows", async () => {
    // x ≥ 0 and router columns +4 for experts 0, 1 (rank 0's of 4), −4 for the rest: every pick is 0 or 1.
    const skewed = {
      ...problem,
      x: problem.x.map(Math.abs),
      weights: { ...problem.weights, router: problem.weights.router.map((_, i) => (i % DIMS.experts < 2 ? 4 : -4)) },
    };
    const { saved } = moeForward({ worldSize: 1, allToAll: copyAllToAll }, DIMS, skewed.weights, skewed.x);
    expect(Array.from(saved.plan.order.counts.subarray(2))).toEqual(new Array(DIMS.experts - 2).fill(0));
    const one = runMoeJob({ problem: skewed, steps: 2, lr: LR, init: commFor(1), rank: 0 });
    const runs = await runOnWorkers(4, { problem: skewed, steps: 2, lr: LR });
    expect(maxErr(concat(runs.map((r) => r.y)), one.y)).toBeLessThan(1e-4);
    expect(maxErr(concat(runs.map((r) => r.grads.w1)), one.grads.w1)).toBeLessThan(1e-4);
    for (const r of runs) expect(maxErr(r.losses, one.losses)).toBeLessThan(1e-4);
  });

  for (const ranks of [2, 4]) {
    it(`gives the one-rank outputs, gradients and SGD losses on ${ranks} ranks`, async () => {
      const runs = await runOnWorkers(ranks, job);
      // Each expert sees its rows in the one-rank order, so step 0 is the same bits but for the router
      // gradient, whose per-rank parts an all-reduce sums.
      expect(concat(runs.map((r) => r.y))).toEqual(solo.y);
      expect(concat(runs.map((r) => r.dx))).toEqual(solo.dx);
      for (const key of ['w1', 'w3', 'w2'] as const) {
        expect(concat(runs.map((r) => r.grads[key])), key).toEqual(solo.grads[key]);
      }
      for (const r of runs) expect(maxErr(r.grads.router, solo.grads.router)).toBeLessThan(1e-4);
      for (const r of runs) expect(maxErr(r.losses, solo.losses)).toBeLessThan(1e-4);
    });
  }
});

/** A one-rank all-to-all: the copy it reduces to. */
function copyAllToAll(_d: unknown, input: Float32Array, output: Float32Array): void {
  output.set(input);
}

describe('MoE layer backward', () => {
  it('matches central differences of Σ R·y for x, the router and every expert weight (f32, one rank)', () => {
    const dims = { ...DIMS, tokens: 6 };
    const p = makeProblem(7, dims);
    const comm = { worldSize: 1, allToAll: copyAllToAll };
    const R = makeProblem(8, dims).target;
    const loss = () => {
      const { y } = moeForward(comm, dims, p.weights, p.x);
      let s = 0;
      for (let i = 0; i < y.length; i++) s += y[i] * R[i];
      return s;
    };
    const { saved } = moeForward(comm, dims, p.weights, p.x);
    const { dx, grads } = moeBackward(comm, dims, p.weights, saved, R);
    const weights = (['router', 'w1', 'w3', 'w2'] as const).map((k) => [k, p.weights[k], grads[k]] as const);
    const checks = [['x', p.x, dx] as const, ...weights];
    for (const [name, param, grad] of checks) {
      const bad: string[] = [];
      for (let i = 0; i < param.length; i += 3) {
        // a third of the entries: f32 differences are slow enough
        const v = param[i];
        const h = 1e-2;
        param[i] = v + h;
        const lp = loss();
        param[i] = v - h;
        const lm = loss();
        param[i] = v;
        const num = (lp - lm) / (2 * h);
        if (Math.abs(num - grad[i]) > 2e-3 + 2e-2 * Math.abs(num)) {
          bad.push(`${name}[${i}]: numeric ${num}, analytic ${grad[i]}`);
        }
      }
      expect(bad, bad.slice(0, 5).join('\n')).toEqual([]);
    }
  });
});
