// Fidelity to real runs: torchtitan's published Llama3-8B rows beside fsdp-sim's numbers for the
// same settings, on the presets as shipped (h100-96gb + nvlink-ib: the GPUs and network of the
// runs; no override, one set of constants per GPU). Every FSDP-only row must be within 15 % on
// tokens/s per GPU and on memory (torchtitan logs the caching allocator's peak reserved bytes).
//
// Source: pytorch/torchtitan PR #1881 "[SimpleFSDP] add manual bucketing pass" (Oct 2025), its
// Llama 3-8B table: batch size 1 per rank, seq 8192 and selective (op) activation checkpointing
// (torchtitan's llama3_8b.toml), bf16 params / fp32 reduce, H100 96 GB (reports 95 GiB: 40.96 GiB
// = 43.12 %). "SimpleFSDP" there is SimpleFSDP on `aot_eager` with manual per-block bucketing =
// fsdp-sim's transformer_block; "FSDP2" is FSDP2 in eager mode = fsdp2_eager.
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
  readonly backend: BackendName;
  readonly tokensPerSecPerGpu: number;
  readonly memoryGiB: number; // torchtitan's "memory:", max_memory_reserved
}

const PR_1881 = 'torchtitan PR #1881, Llama 3-8B table';

const PUBLISHED_RUNS: readonly PublishedRun[] = [
  { name: 'SimpleFSDP, FSDP 8 (1 node)', source: PR_1881, ranks: 8, backend: 'transformer_block', tokensPerSecPerGpu: 7227, memoryGiB: 40.96 },
  { name: 'FSDP2 eager, FSDP 8 (1 node)', source: PR_1881, ranks: 8, backend: 'fsdp2_eager', tokensPerSecPerGpu: 7380, memoryGiB: 47.82 },
  { name: 'SimpleFSDP, FSDP 64 (8 nodes)', source: PR_1881, ranks: 64, backend: 'transformer_block', tokensPerSecPerGpu: 4984, memoryGiB: 29.37 },
  { name: 'FSDP2 eager, FSDP 64 (8 nodes)', source: PR_1881, ranks: 64, backend: 'fsdp2_eager', tokensPerSecPerGpu: 5097, memoryGiB: 31.41 },
];

// Not yet checked: the FSDP 4 × TP 2 rows of torchtitan PR #1881 (SimpleFSDP and FSDP2 eager)
// and PR #2961 (aot_eager_autobucketing: 6,938 → 7,214 tokens/s, 1,820 → 1,382 collectives). The
// mesh is modelled; their published settings and memory could not be read from the stored thread.

function simulateRow(row: PublishedRun) {
  const cfg = validateConfig({
    model: 'llama3-8b', ranks: row.ranks, localBatch: 1, seqLen: 8192, activationCheckpointing: 'selective',
    hardware: 'h100-96gb', network: 'nvlink-ib', paramDtype: 'bf16', reduceDtype: 'fp32',
  });
  if (!cfg.ok) throw cfg.error;
  return stepFigures(runPipeline(cfg.value, row.backend));
}

describe('published torchtitan runs (Llama3-8B, H100 96 GB)', () => {
  for (const row of PUBLISHED_RUNS) {
    it(`${row.name}: tokens/s per GPU and reserved memory within 15 % of ${row.source}`, () => {
      const f = simulateRow(row);
      const tps = f.tokensPerSecPerGpu / row.tokensPerSecPerGpu;
      const mem = f.peakReservedBytes / GIB / row.memoryGiB;
      expect(Math.abs(tps - 1), `tokens/s ${f.tokensPerSecPerGpu.toFixed(0)} vs ${row.tokensPerSecPerGpu}`).toBeLessThanOrEqual(TOLERANCE);
      expect(Math.abs(mem - 1), `reserved ${(f.peakReservedBytes / GIB).toFixed(2)} GiB vs ${row.memoryGiB}`).toBeLessThanOrEqual(TOLERANCE);
      expect(f.peakReservedBytes).toBeGreaterThanOrEqual(f.peakAllocatedBytes);
    }, 60_000);
  }

  it('keeps the published orderings: 64 ranks slower per GPU than 8, FSDP2 reserving more than SimpleFSDP', () => {
    const [s8, f8, s64, f64] = PUBLISHED_RUNS.map(simulateRow);
    expect(s64.tokensPerSecPerGpu).toBeLessThan(s8.tokensPerSecPerGpu * 0.85);
    expect(f8.peakReservedBytes).toBeGreaterThan(s8.peakReservedBytes);
    expect(f64.peakReservedBytes).toBeGreaterThan(s64.peakReservedBytes);
    expect(s64.peakReservedBytes).toBeLessThan(s8.peakReservedBytes); // more ranks, smaller shards
  }, 120_000);

});
