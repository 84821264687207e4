// Live training of moe-tiny with tensor parallel (Node worker_threads, CPU kernels): the step graph's
// TP plan for an MoE model (graph/moe.ts, moe_block.ts: sequence-parallel norms, heads split, the
// shared expert colwise / rowwise, routed experts split on F without EP or over ep with it) computes
// the same math as one rank: the losses of the same global batch match within 1e-5 (measured:
// 2.4e-7, fp32 rounding; leaving out the tp all-reduce of the replicated weights' partial gradients
// is off by 1.8e-4 at step 3), and the tp group's collectives run on its own communicator.
import { describe, expect, it } from 'vitest';
import { trainOnce } from '../../../helpers/live_training';

const MOE = { model: 'moe-tiny', steps: 4 } as const;

describe('live training of moe-tiny with tensor parallel', () => {
  it('matches one rank within 1e-5 (4 ranks: tp 2; tp 2 × ep 2)', async () => {
    const one = await trainOnce({ ...MOE, ranks: 1 });
    for (const ep of [1, 2]) {
      const run = await trainOnce({ ...MOE, ranks: 4, tp: 2, ep });
      expect(run.losses).toHaveLength(4);
      run.losses.forEach((l, i) =>
        expect(Math.abs(l - one.losses[i]), `tp 2 ep ${ep} step ${i + 1}`).toBeLessThan(1e-5),
      );
      expect(run.events.some((e) => e.stream === 'comm:tp')).toBe(true);
      expect(run.events.some((e) => e.stream === 'comm:ep')).toBe(ep > 1);
    }
  }, 240_000);
});
