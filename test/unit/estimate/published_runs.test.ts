// Fidelity to real runs: torchtitan's published Llama3-8B rows beside fsdp-sim's numbers for the
// same settings, on the presets as shipped (h100-96gb + nvlink-ib: the GPUs and network of the
// runs; no override, one set of constants per GPU). Every row must be within 15 % on tokens/s per
// GPU and, where published, on memory (torchtitan logs the caching allocator's peak reserved
// bytes). The per-row settings are the torch and torchtitan of the run: PR #1881's torch (Oct 2025)
// still copied every sequence-parallel all-gather's output (seqParallelGatherCopy; pytorch PR
// #169404 made it a view in Dec 2025), PR #2961's (Apr 2026) did not; PR #2961 ran graph_trainer's
// aot_fx_trace — one joint graph, passed once — with nothing recomputed (memory policy none): its
// 1,820 collective ops are exactly that graph's (test/unit/graph/torch_tp_joint.test.ts), where a
// recompute would add the backward's re-gathers. PR #2961 was posted on 2026-04-14, on that month's
// torch nightly (2.12.0.dev, after 2.11's branch cut): FSDP pre-bucketing was then still in review
// (pytorch PR #179935 opened 2026-04-10, closed; re-posted as #180830 on 2026-04-20), so its pass
// ran with pre_bucketing_fsdp_collectives off (PRE_BUCKETING); 2.13's other defaults
// (max_off_bucket_gb 0.5, bucket_exposed_first auto) give the same tokens/s here as 2.11's.
//
// Sources (all: batch size 1 per rank, seq 8192, selective (op) activation checkpointing, bf16
// params / fp32 reduce, one node of 8 H100 unless said):
//  - pytorch/torchtitan PR #1881 "[SimpleFSDP] add manual bucketing pass" (Oct 2025), its Llama 3-8B
//    table (torchtitan's llama3_8b.toml; H100 96 GB, reports 95 GiB: 40.96 GiB = 43.12 %).
//    "SimpleFSDP" there is SimpleFSDP on `aot_eager` with manual per-block bucketing = fsdp-sim's
//    transformer_block; "FSDP2" is FSDP2 in eager mode = fsdp2_eager. Its FSDP 4 × TP 2 rows:
//    SimpleFSDP 28.28 GiB (29.77 %), 5,881 TPS; FSDP2 35.33 GiB (37.20 %), 5,898 TPS (the FSDP 8 ×
//    TP 8 rows on 64 GPUs are empty there). Read from the PR page.
//  - pytorch/torchtitan PR #2961 "[autoresearch] Autobucketing reordering for aot_fx_trace" (Apr
//    2026): graph_trainer_llama3_8b (llama3_8b at seq 8192, same training settings), FSDP(4)+TP(2)
//    on 8×H100, `aot_fx_trace` without → with schedule_overlap_bucketing(collective_bucketing=True):
//    6,938 → 7,214 TPS (MFU 40.63 → 42.24 %), 1,820 → 1,382 collective ops (collectives and their
//    wait_tensor nodes in the one joint forward-loss-backward graph: 910 → 691). No memory published;
//    the H100 variant is not named (taken as the same 96 GB hosts as PR #1881). The baseline is the
//    traced joint graph in program order = fsdp-sim's aot_eager on compileMode aot_fx_trace; with
//    the pass = aot_eager_autobucketing, run once over the joint graph. graph_trainer ran cudagraph_pass
//    on every aot_fx_trace step from 2026-04-08 (torchtitan #2868), so both rows replay one CUDA
//    graph: compileMode aot_fx_trace's default (cudaGraphs null), each kernel 0.875 µs, not 4.
//  - pytorch/torchtitan PR #3429 "[graph_trainer] Add full recompute memory policy" (Jun 2026): Llama3
//    8B on 8×H100 (taken as the 96 GB hosts), 20 steps, graph_trainer aot_fx_trace with its default
//    passes (joint_transformer_block_bucketing_reordering_pass = fsdp-sim's transformer_block, then
//    cudagraph_pass), memory policy default vs full: FSDP4+TP2 6,607 TPS 30.92 GiB / 5,933 TPS 20.70
//    GiB; FSDP8+TP1 7,890 / 52.44 and 7,006 / 32.07. Read from the merged commit's message (27aa490).
// docs/fidelity.md shows these rows ("Torchtitan's published runs"), each from a compare command.
import { describe, expect, it } from 'vitest';
import type { BackendName } from '../../../src/backends';
import { validateConfig } from '../../../src/config';
import { runPipeline } from '../../../src/pipeline';
import { stepFigures } from '../../../src/pipeline/figures';
import { exposedCommByGroup } from '../../../src/sim';

const GIB = 2 ** 30;
const TOLERANCE = 0.15;

interface PublishedRun {
  readonly name: string;
  readonly source: string;
  readonly ranks: number;
  /** parallelism.tensor_parallel_degree (dp_shard is the rest). */
  readonly tp: number;
  readonly backend: BackendName;
  readonly tokensPerSecPerGpu: number;
  readonly memoryGiB: number | null; // torchtitan's "memory:", max_memory_reserved; null: not published
  /** graph_trainer's compile.memory_policy, where the row sets it (else the source's). */
  readonly memoryPolicy?: 'default' | 'full';
}

const PR_1881 = 'torchtitan PR #1881, Llama 3-8B table';
const PR_2961 = 'torchtitan PR #2961, Llama3 8B FSDP(4)+TP(2)';
const PR_3429 = 'torchtitan PR #3429, Llama3 8B memory policies';
/** The run's torch copied each sequence-parallel all-gather's output (before pytorch PR #169404). */
const SP_GATHER_COPY: Readonly<Record<string, boolean>> = { [PR_1881]: true, [PR_2961]: false, [PR_3429]: false };
/**
 * How the run's torchtitan compiled the step: SimpleFSDP's torch.compile (jit) or graph_trainer's joint graph,
 * which replays as one CUDA graph (cudaGraphs null: aot_fx_trace's default, on).
 */
const COMPILE: Readonly<Record<string, object>> = {
  [PR_1881]: {},
  [PR_2961]: { compileMode: 'aot_fx_trace', memoryPolicy: 'none' },
  [PR_3429]: { compileMode: 'aot_fx_trace' },
};
/** The run's torch had no FSDP pre-bucketing yet (see the header); the other knobs are the defaults. */
const PRE_BUCKETING: Readonly<Record<string, object>> = {
  [PR_1881]: {},
  [PR_2961]: { autobucketing: { pre_bucketing_fsdp_collectives: false } },
  [PR_3429]: {},
};

const PUBLISHED_RUNS: readonly PublishedRun[] = [
  {
    name: 'SimpleFSDP, FSDP 8 (1 node)',
    source: PR_1881,
    ranks: 8,
    tp: 1,
    backend: 'transformer_block',
    tokensPerSecPerGpu: 7227,
    memoryGiB: 40.96,
  },
  {
    name: 'FSDP2 eager, FSDP 8 (1 node)',
    source: PR_1881,
    ranks: 8,
    tp: 1,
    backend: 'fsdp2_eager',
    tokensPerSecPerGpu: 7380,
    memoryGiB: 47.82,
  },
  {
    name: 'SimpleFSDP, FSDP 64 (8 nodes)',
    source: PR_1881,
    ranks: 64,
    tp: 1,
    backend: 'transformer_block',
    tokensPerSecPerGpu: 4984,
    memoryGiB: 29.37,
  },
  {
    name: 'FSDP2 eager, FSDP 64 (8 nodes)',
    source: PR_1881,
    ranks: 64,
    tp: 1,
    backend: 'fsdp2_eager',
    tokensPerSecPerGpu: 5097,
    memoryGiB: 31.41,
  },
  {
    name: 'SimpleFSDP, FSDP 4 × TP 2 (1 node)',
    source: PR_1881,
    ranks: 8,
    tp: 2,
    backend: 'transformer_block',
    tokensPerSecPerGpu: 5881,
    memoryGiB: 28.28,
  },
  {
    name: 'FSDP2 eager, FSDP 4 × TP 2 (1 node)',
    source: PR_1881,
    ranks: 8,
    tp: 2,
    backend: 'fsdp2_eager',
    tokensPerSecPerGpu: 5898,
    memoryGiB: 35.33,
  },
  {
    name: 'aot_fx_trace, FSDP 4 × TP 2 (1 node)',
    source: PR_2961,
    ranks: 8,
    tp: 2,
    backend: 'aot_eager',
    tokensPerSecPerGpu: 6938,
    memoryGiB: null,
  },
  {
    name: 'aot_fx_trace + autobucketing, FSDP 4 × TP 2 (1 node)',
    source: PR_2961,
    ranks: 8,
    tp: 2,
    backend: 'aot_eager_autobucketing',
    tokensPerSecPerGpu: 7214,
    memoryGiB: null,
  },
  {
    name: 'graph_trainer, memory policy default, FSDP 4 × TP 2',
    source: PR_3429,
    ranks: 8,
    tp: 2,
    backend: 'transformer_block',
    tokensPerSecPerGpu: 6607,
    memoryGiB: 30.92,
    memoryPolicy: 'default',
  },
  {
    name: 'graph_trainer, memory policy full, FSDP 4 × TP 2',
    source: PR_3429,
    ranks: 8,
    tp: 2,
    backend: 'transformer_block',
    tokensPerSecPerGpu: 5933,
    memoryGiB: 20.7,
    memoryPolicy: 'full',
  },
  {
    name: 'graph_trainer, memory policy default, FSDP 8',
    source: PR_3429,
    ranks: 8,
    tp: 1,
    backend: 'transformer_block',
    tokensPerSecPerGpu: 7890,
    memoryGiB: 52.44,
    memoryPolicy: 'default',
  },
  {
    name: 'graph_trainer, memory policy full, FSDP 8',
    source: PR_3429,
    ranks: 8,
    tp: 1,
    backend: 'transformer_block',
    tokensPerSecPerGpu: 7006,
    memoryGiB: 32.07,
    memoryPolicy: 'full',
  },
];

function simulateRow(row: PublishedRun) {
  const cfg = validateConfig({
    model: 'llama3-8b',
    ranks: row.ranks,
    localBatch: 1,
    seqLen: 8192,
    activationCheckpointing: 'selective',
    hardware: 'h100-96gb',
    network: 'nvlink-ib',
    paramDtype: 'bf16',
    reduceDtype: 'fp32',
    parallelism: { tensor_parallel_degree: row.tp },
    seqParallelGatherCopy: SP_GATHER_COPY[row.source],
    ...COMPILE[row.source],
    ...PRE_BUCKETING[row.source],
    ...(row.memoryPolicy !== undefined ? { memoryPolicy: row.memoryPolicy } : {}),
  });
  if (!cfg.ok) throw cfg.error;
  return runPipeline(cfg.value, row.backend);
}

const figuresOf = (row: PublishedRun) => stepFigures(simulateRow(row));

/** Collective launches per rank, every kind (a bucket counts once), as torch counts the graph's ops. */
function collectivesOf(row: PublishedRun): number {
  return Object.values(simulateRow(row).metrics.collectives).reduce((a, b) => a + b, 0);
}

describe('published torchtitan runs (Llama3-8B, H100 96 GB)', () => {
  for (const row of PUBLISHED_RUNS) {
    const what = row.memoryGiB === null ? 'tokens/s per GPU' : 'tokens/s per GPU and reserved memory';
    it(`${row.name}: ${what} within 15 % of ${row.source}`, () => {
      const f = figuresOf(row);
      const tps = f.tokensPerSecPerGpu / row.tokensPerSecPerGpu;
      const tpsMsg = `tokens/s ${f.tokensPerSecPerGpu.toFixed(0)} vs ${row.tokensPerSecPerGpu}`;
      expect(Math.abs(tps - 1), tpsMsg).toBeLessThanOrEqual(TOLERANCE);
      if (row.memoryGiB !== null) {
        const mem = f.peakReservedBytes / GIB / row.memoryGiB;
        const memMsg = `reserved ${(f.peakReservedBytes / GIB).toFixed(2)} GiB vs ${row.memoryGiB}`;
        expect(Math.abs(mem - 1), memMsg).toBeLessThanOrEqual(TOLERANCE);
      }
      expect(f.peakReservedBytes).toBeGreaterThanOrEqual(f.peakAllocatedBytes);
    }, 60_000);
  }

  it('keeps the published orderings: 64 ranks slower per GPU than 8, FSDP2 reserving more than SimpleFSDP', () => {
    const [s8, f8, s64, f64, s4x2, f4x2] = PUBLISHED_RUNS.slice(0, 6).map(figuresOf);
    expect(s64.tokensPerSecPerGpu).toBeLessThan(s8.tokensPerSecPerGpu * 0.85);
    expect(f8.peakReservedBytes).toBeGreaterThan(s8.peakReservedBytes);
    expect(f64.peakReservedBytes).toBeGreaterThan(s64.peakReservedBytes);
    expect(f4x2.peakReservedBytes).toBeGreaterThan(s4x2.peakReservedBytes);
    expect(s64.peakReservedBytes).toBeLessThan(s8.peakReservedBytes); // more ranks, smaller shards
    expect(s4x2.peakReservedBytes).toBeLessThan(s8.peakReservedBytes); // TP halves weights and activations
  }, 120_000);

  // PR #2961's 1,820 → 1,382 collective ops count collectives and their waits in the joint graph,
  // the 3 loss-parallel all-reduces fsdp-sim's loss op runs inside itself included. Its gain is
  // +4.0 % (6,938 → 7,214, 590 → 568 ms a step); fsdp-sim's is +8.7 % (+8.4 % before CUDA graphs were
  // modelled: replayed from one graph, the bucketed step's 303 more copy kernels shed their launch
  // too, 9.2 ms against the baseline's 8.6) with each bucket's copy kernels
  // (src/sim/bucket_copies.ts) and compute slowed by 18.9 % beside a collective in flight
  // (src/sim/contention.ts). The built graph runs each linear's backward in the order torch's autograd
  // traces it (dW, then dX, then dW's reduce-scatter: src/graph/backward.ts), so, as in torch's own
  // pass on the joint graph torch traces (tools/torch_tp/joint_pass.py, 32 layers; the port agrees
  // with it on every bucket and prefetch), the dp_shard collectives end ~94 % hidden and the TP
  // all-gathers and reduce-scatters stay exposed. The rest, ~25 ms, is not in torch's plan:
  // docs/published_runs.md. No constant is fitted to this row, so the gain is held to what the
  // model gives, within 5 points of the run's.
  // PR #3429: full recompute costs 10.2 % (FSDP 4 × TP 2) and 11.2 % (FSDP 8) of the throughput of
  // graph_trainer's default SAC policy and saves 33.0 % and 38.8 % of its memory
  it('trades throughput for memory under memory policy full as PR #3429 measured, within 5 points', () => {
    const [d4x2, f4x2, d8, f8] = PUBLISHED_RUNS.slice(8, 12);
    for (const [def, full] of [
      [d4x2, f4x2],
      [d8, f8],
    ]) {
      const [a, b] = [figuresOf(def), figuresOf(full)];
      const tpsDrop = 1 - b.tokensPerSecPerGpu / a.tokensPerSecPerGpu;
      const memDrop = 1 - b.peakReservedBytes / a.peakReservedBytes;
      const published = [1 - full.tokensPerSecPerGpu / def.tokensPerSecPerGpu, 1 - full.memoryGiB! / def.memoryGiB!];
      expect(
        Math.abs(tpsDrop - published[0]),
        `${def.name}: tokens/s −${(tpsDrop * 100).toFixed(1)} %`,
      ).toBeLessThanOrEqual(0.05);
      expect(
        Math.abs(memDrop - published[1]),
        `${def.name}: memory −${(memDrop * 100).toFixed(1)} %`,
      ).toBeLessThanOrEqual(0.05);
    }
  }, 60_000);

  it("hides the dp_shard collectives of the joint graph as torch's own pass does (94 % at 32 layers)", () => {
    const [base, bucketed] = PUBLISHED_RUNS.slice(6, 8).map((r) => exposedCommByGroup(0, simulateRow(r).sim.events));
    // torch leaves 4.1 of 70.5 ms exposed (tools/torch_tp/results/pr2961_joint_pass.json): the first
    // all-gather (the embedding's) and the last reduce-scatters, whatever the depth
    expect(base.dp_shard).toBeGreaterThan(0);
    expect(bucketed.dp_shard / base.dp_shard).toBeLessThanOrEqual(0.1);
  }, 60_000);

  it("speeds FSDP 4 × TP 2 up with autobucketing, with PR #2961's collective ops (1,820 → 1,382)", () => {
    const [base, bucketed] = PUBLISHED_RUNS.slice(6, 8).map(figuresOf);
    const gainPts = (bucketed.tokensPerSecPerGpu / base.tokensPerSecPerGpu - 1) * 100;
    const publishedPts = (7214 / 6938 - 1) * 100;
    expect(gainPts).toBeGreaterThan(0);
    expect(
      Math.abs(gainPts - publishedPts),
      `gain ${gainPts.toFixed(1)} % vs ${publishedPts.toFixed(1)} %`,
    ).toBeLessThanOrEqual(5);
    const LOSS_PARALLEL = 3;
    const [before, after] = PUBLISHED_RUNS.slice(6, 8).map((r) => 2 * (collectivesOf(r) + LOSS_PARALLEL));
    expect(before).toBe(1820);
    expect(Math.abs(after / 1382 - 1), `${after} collective ops after the pass`).toBeLessThanOrEqual(0.05);
  }, 60_000);
});
