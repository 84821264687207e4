// Fidelity to published DeepSeek-V3-16B runs (docs/moe.md, "Published runs"): the runs' shapes on the
// presets as shipped, one set of constants per GPU, nothing fitted to these rows.
//  - pytorch/torchtitan PR #2080 "[simplefsdp] fix & enable DSV3 manual bucketing" (Nov–Dec 2025):
//    8 H100 (95 GiB reported: the 96 GB hosts), batch 1 × 4096, SimpleFSDP on aot_eager against FSDP2
//    eager. "FSDP=4 EP=2" is dp_shard 8 with ep 2 (the experts' FSDP degree efsdp = 4), "FSDP=2 TP=2
//    EP=2" dp_shard 4 × tp 2 with ep 2. The 16B config of the day ran op-level selective AC; FSDP2's
//    DSV3 path passed DSV3's save list, SimpleFSDP's passed none (nothing saved: full recompute). The
//    loss was compiled: by inductor under FSDP2 (fused), by SimpleFSDP's aot_eager backend (eager
//    ops). Its TP rows ran the TP plan of the day; fsdp-sim models b5bcd76's (experts over ep only).
//  - pytorch/torchtitan issue #1789 "DeepSeek-V3-16B OOMs on 8 x H100 80GB HBM3" (Oct 2025): the 16B
//    config of the day (ep 8, op-level selective AC, FSDP2 eager, the loss compiled) with the local
//    batch lowered, taken as 4 (PR #1792 then set it): step 10 of its log.
// Batch 4 lands within 15 %. At batch 1 fsdp-sim is optimistic on tokens/s and low on memory; the
// bands below are the documented ones (docs/moe.md says what is not modelled), and the published
// orderings must hold.
import { describe, expect, it } from 'vitest';
import type { BackendName } from '../../../src/backends';
import { validateConfig } from '../../../src/config';
import { runPipeline } from '../../../src/pipeline';
import { stepFigures } from '../../../src/pipeline/figures';

const GIB = 2 ** 30;

interface MoeRun {
  readonly name: string;
  readonly hardware: 'h100' | 'h100-96gb';
  readonly batch: number;
  readonly tp: number;
  readonly ep: number;
  readonly ac: 'selective' | 'full';
  readonly backend: BackendName;
  readonly tokensPerSecPerGpu: number;
  readonly memoryGiB: number;
}

const PR_2080 = { hardware: 'h100-96gb', batch: 1, ep: 2 } as const;
const RUNS: readonly MoeRun[] = [
  {
    ...PR_2080,
    name: 'PR #2080 SimpleFSDP, FSDP=4 EP=2',
    tp: 1,
    ac: 'full',
    backend: 'aot_eager',
    tokensPerSecPerGpu: 5136,
    memoryGiB: 51.11,
  },
  {
    ...PR_2080,
    name: 'PR #2080 FSDP2, FSDP=4 EP=2',
    tp: 1,
    ac: 'selective',
    backend: 'fsdp2_eager',
    tokensPerSecPerGpu: 5942,
    memoryGiB: 59.54,
  },
  {
    ...PR_2080,
    name: 'PR #2080 SimpleFSDP, FSDP=2 TP=2 EP=2',
    tp: 2,
    ac: 'full',
    backend: 'aot_eager',
    tokensPerSecPerGpu: 2285,
    memoryGiB: 42.21,
  },
  {
    ...PR_2080,
    name: 'PR #2080 FSDP2, FSDP=2 TP=2 EP=2',
    tp: 2,
    ac: 'selective',
    backend: 'fsdp2_eager',
    tokensPerSecPerGpu: 2349,
    memoryGiB: 45.41,
  },
  {
    name: 'issue #1789 FSDP2, EP=8',
    hardware: 'h100',
    batch: 4,
    tp: 1,
    ep: 8,
    ac: 'selective',
    backend: 'fsdp2_eager',
    tokensPerSecPerGpu: 11636,
    memoryGiB: 73.32,
  },
];

function figuresOf(run: MoeRun) {
  const cfg = validateConfig({
    model: 'dsv3-16b',
    ranks: 8,
    localBatch: run.batch,
    seqLen: 4096,
    hardware: run.hardware,
    network: 'nvlink-ib',
    activationCheckpointing: run.ac,
    // the loss compiled by inductor under FSDP2, by SimpleFSDP's aot_eager backend (eager ops) under it
    compileLoss: run.backend === 'aot_eager' ? 'off' : 'on',
    parallelism: { tensor_parallel_degree: run.tp, expert_parallel_degree: run.ep },
  });
  if (!cfg.ok) throw cfg.error;
  return stepFigures(runPipeline(cfg.value, run.backend));
}

const ratios = (run: MoeRun) => {
  const f = figuresOf(run);
  return { tps: f.tokensPerSecPerGpu / run.tokensPerSecPerGpu, mem: f.peakReservedBytes / GIB / run.memoryGiB, f };
};

describe('published DSV3-16B runs', () => {
  it('issue #1789 (batch 4): tokens/s per GPU and reserved memory within 15 %', () => {
    const { tps, mem } = ratios(RUNS[4]);
    expect(Math.abs(tps - 1), `tokens/s ratio ${tps}`).toBeLessThanOrEqual(0.15);
    expect(Math.abs(mem - 1), `memory ratio ${mem}`).toBeLessThanOrEqual(0.15);
  }, 60_000);

  it('PR #2080 without TP (batch 1): tokens/s within 30 %, memory within the documented band', () => {
    for (const run of RUNS.slice(0, 2)) {
      const { tps, mem } = ratios(run);
      expect(Math.abs(tps - 1), `${run.name}: tokens/s ratio ${tps}`).toBeLessThanOrEqual(0.3);
      expect(mem, `${run.name}: memory ratio ${mem}`).toBeGreaterThanOrEqual(0.6);
      expect(mem, `${run.name}: memory ratio ${mem}`).toBeLessThanOrEqual(1.15);
    }
  }, 60_000);

  it("keeps PR #2080's orderings: FSDP2 faster and larger than SimpleFSDP, TP slower per GPU and smaller", () => {
    const [s, f, sTp, fTp] = RUNS.slice(0, 4).map(figuresOf);
    for (const [simple, fsdp2] of [
      [s, f],
      [sTp, fTp],
    ]) {
      expect(fsdp2.tokensPerSecPerGpu).toBeGreaterThan(simple.tokensPerSecPerGpu);
      expect(fsdp2.peakReservedBytes).toBeGreaterThan(simple.peakReservedBytes);
    }
    expect(sTp.tokensPerSecPerGpu).toBeLessThan(s.tokensPerSecPerGpu);
    expect(fTp.tokensPerSecPerGpu).toBeLessThan(f.tokensPerSecPerGpu);
    expect(sTp.peakReservedBytes).toBeLessThan(s.peakReservedBytes);
    expect(fTp.peakReservedBytes).toBeLessThan(f.peakReservedBytes);
  }, 120_000);
});
