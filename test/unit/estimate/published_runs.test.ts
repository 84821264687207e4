// Fidelity to real runs: torchtitan's published Llama3-8B rows beside fsdp-sim's numbers for the
// same settings, on the presets as shipped (h100-96gb + nvlink-ib: the GPUs and network of the
// runs; no override, one set of constants per GPU). Every row must be within 15 % on tokens/s per
// GPU and, where published, on memory (torchtitan logs the caching allocator's peak reserved
// bytes) — except a row with a `knownGap`, which says what the model misses there; its test checks
// the gap is still there, so closing it fails the test and the row gets promoted.
//
// Sources (all: batch size 1 per rank, seq 8192, selective (op) activation checkpointing, bf16
// params / fp32 reduce, one node of 8 H100 unless said):
//  - pytorch/torchtitan PR #1881 "[SimpleFSDP] add manual bucketing pass" (Oct 2025), its Llama 3-8B
//    table (torchtitan's llama3_8b.toml; H100 96 GB, reports 95 GiB: 40.96 GiB = 43.12 %).
//    "SimpleFSDP" there is SimpleFSDP on `aot_eager` with manual per-block bucketing = fsdp-sim's
//    transformer_block; "FSDP2" is FSDP2 in eager mode = fsdp2_eager. Its FSDP 4 × TP 2 rows:
//    SimpleFSDP 28.28 GiB (29.77 %), 5,881 TPS; FSDP2 35.33 GiB (37.20 %), 5,898 TPS (the FSDP 8 ×
//    TP 8 rows on 64 GPUs are empty there). Read from the PR page (search corpus "pages").
//  - pytorch/torchtitan PR #2961 "[autoresearch] Autobucketing reordering for aot_fx_trace" (Apr
//    2026): graph_trainer_llama3_8b (llama3_8b at seq 8192, same training settings), FSDP(4)+TP(2)
//    on 8×H100, `aot_fx_trace` without → with schedule_overlap_bucketing(collective_bucketing=True):
//    6,938 → 7,214 TPS (MFU 40.63 → 42.24 %), 1,820 → 1,382 collective ops. No memory published;
//    the H100 variant is not named (taken as the same 96 GB hosts as PR #1881). The baseline is the
//    traced graph in program order = fsdp-sim's aot_eager; with the pass = aot_eager_autobucketing.
// The README shows this table ("Fidelity to published runs").
import { describe, expect, it } from 'vitest';
import type { BackendName } from '../../../src/backends';
import { validateConfig } from '../../../src/config';
import { runPipeline } from '../../../src/pipeline';
import { stepFigures } from '../../../src/pipeline/figures';

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
  /** Why fsdp-sim's tokens/s misses this row by more than 15 % (what the model lacks), if it does. */
  readonly knownGap?: string;
}

const PR_1881 = 'torchtitan PR #1881, Llama 3-8B table';
const PR_2961 = 'torchtitan PR #2961, Llama3 8B FSDP(4)+TP(2)';
// Measured: fsdp-sim 7,254 (SimpleFSDP, 1.23×) and 7,356 tokens/s (FSDP2, 1.25×), against 1.07–1.10×
// on the FSDP-only rows of the same table, while PR #2961's traced graph on the same mesh runs at
// 6,938 without any bucketing (fsdp-sim 0.92×). fsdp-sim times a TP-2 sequence-parallel collective
// (64 MiB) at ~0.1 ms on NVLink and leaves it exposed; matching 5,881 would need TP's exposed time
// ~2.2× longer on both backends. Part of the difference is a layout copy the graph has no node for:
// torch's functional all_gather_single with gather_dim = 1 ran torch.cat(torch.chunk(...)) after
// the all-gather until pytorch/pytorch PR #169404 (Dec 2025) made the batch-size-1 case a view, and
// reduce_scatter_single with scatter_dim = 1 still copies its input (_chunk_or_narrow_cat, torch
// 2.13). At ~74 µs per 64 MiB copy on this GPU that is ~24 ms per step in Oct 2025 (194 TP
// all-gathers + 130 reduce-scatters) and ~10 ms in Apr 2026: 1.18× on the SimpleFSDP row, still
// outside 15 %. The rest (~100 ms) is not explained by the stored material.
const TP_2025_GAP = 'the Oct 2025 FSDP+TP runs pay ~130 ms per step for TP that fsdp-sim does not model';

const PUBLISHED_RUNS: readonly PublishedRun[] = [
  { name: 'SimpleFSDP, FSDP 8 (1 node)', source: PR_1881, ranks: 8, tp: 1, backend: 'transformer_block',
    tokensPerSecPerGpu: 7227, memoryGiB: 40.96 },
  { name: 'FSDP2 eager, FSDP 8 (1 node)', source: PR_1881, ranks: 8, tp: 1, backend: 'fsdp2_eager',
    tokensPerSecPerGpu: 7380, memoryGiB: 47.82 },
  { name: 'SimpleFSDP, FSDP 64 (8 nodes)', source: PR_1881, ranks: 64, tp: 1, backend: 'transformer_block',
    tokensPerSecPerGpu: 4984, memoryGiB: 29.37 },
  { name: 'FSDP2 eager, FSDP 64 (8 nodes)', source: PR_1881, ranks: 64, tp: 1, backend: 'fsdp2_eager',
    tokensPerSecPerGpu: 5097, memoryGiB: 31.41 },
  { name: 'SimpleFSDP, FSDP 4 × TP 2 (1 node)', source: PR_1881, ranks: 8, tp: 2, backend: 'transformer_block',
    tokensPerSecPerGpu: 5881, memoryGiB: 28.28, knownGap: TP_2025_GAP },
  { name: 'FSDP2 eager, FSDP 4 × TP 2 (1 node)', source: PR_1881, ranks: 8, tp: 2, backend: 'fsdp2_eager',
    tokensPerSecPerGpu: 5898, memoryGiB: 35.33, knownGap: TP_2025_GAP },
  { name: 'aot_fx_trace, FSDP 4 × TP 2 (1 node)', source: PR_2961, ranks: 8, tp: 2, backend: 'aot_eager',
    tokensPerSecPerGpu: 6938, memoryGiB: null },
  { name: 'aot_fx_trace + autobucketing, FSDP 4 × TP 2 (1 node)', source: PR_2961, ranks: 8, tp: 2,
    backend: 'aot_eager_autobucketing', tokensPerSecPerGpu: 7214, memoryGiB: null },
];

/** PR #2961's collective ops in the traced graph, without → with the pass. */
const PR_2961_COLLECTIVES = { before: 1820, after: 1382 } as const;

function simulateRow(row: PublishedRun) {
  const cfg = validateConfig({
    model: 'llama3-8b', ranks: row.ranks, localBatch: 1, seqLen: 8192, activationCheckpointing: 'selective',
    hardware: 'h100-96gb', network: 'nvlink-ib', paramDtype: 'bf16', reduceDtype: 'fp32',
    parallelism: { tensor_parallel_degree: row.tp },
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
    const gap = row.knownGap ? ' (memory; tokens/s: known gap)' : '';
    it(`${row.name}: ${what} within 15 % of ${row.source}${gap}`, () => {
      const f = figuresOf(row);
      const tps = f.tokensPerSecPerGpu / row.tokensPerSecPerGpu;
      const tpsMsg = `tokens/s ${f.tokensPerSecPerGpu.toFixed(0)} vs ${row.tokensPerSecPerGpu}`;
      if (row.knownGap === undefined) expect(Math.abs(tps - 1), tpsMsg).toBeLessThanOrEqual(TOLERANCE);
      else {
        const closed = `${tpsMsg}: the gap closed (${row.knownGap}); promote the row`;
        expect(Math.abs(tps - 1), closed).toBeGreaterThan(TOLERANCE);
      }
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

  // torch counts 1,820 collective ops in the joint graph against fsdp-sim's ~1,260 (its graph has
  // ops fsdp-sim's has not, e.g. loss-parallel and DTensor redistributions); what bucketing merges
  // is the comparable part: the collectives the pass removes.
  it('autobucketing on FSDP 4 × TP 2 removes within 15 % as many collectives as torch did (PR #2961)', () => {
    const [before, after] = PUBLISHED_RUNS.slice(6, 8).map(collectivesOf);
    const removed = before - after;
    const published = PR_2961_COLLECTIVES.before - PR_2961_COLLECTIVES.after;
    expect(after).toBeLessThan(before);
    const msg = `removed ${before} → ${after} vs ${published}`;
    expect(Math.abs(removed / published - 1), msg).toBeLessThanOrEqual(TOLERANCE);
  }, 60_000);

  it('speeds FSDP 4 × TP 2 up with autobucketing, as PR #2961 measured (+3.9 %)', () => {
    const [base, bucketed] = PUBLISHED_RUNS.slice(6, 8).map(figuresOf);
    expect(bucketed.tokensPerSecPerGpu).toBeGreaterThan(base.tokensPerSecPerGpu);
  }, 60_000);
});
