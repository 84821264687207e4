// The figures torchtitan logs for a step, from a pipeline run: tokens/s per GPU (its "tps"), and
// the caching allocator's peak allocated and reserved bytes (its "memory" is max_memory_reserved).
// Compared with published runs in test/unit/estimate/published_runs.test.ts and reported by
// `fsdp-sim compare --json`.

import { allocationStreamOf } from '../backends';
import { allocatorPeaks } from '../sim';
import type { PipelineResult } from './run';

export interface StepFigures {
  /** This rank's tokens (local batch × seq) per simulated step second. */
  readonly tokensPerSecPerGpu: number;
  /** torch.cuda.max_memory_allocated of rank 0's schedule, bytes. */
  readonly peakAllocatedBytes: number;
  /** torch.cuda.max_memory_reserved of rank 0's schedule, bytes (what torchtitan logs; what HBM-fit checks use). */
  readonly peakReservedBytes: number;
}

export function stepFigures(r: Pick<PipelineResult, 'backend' | 'schedule' | 'metrics'>): StepFigures {
  // a TP group shares its batch (torchtitan's tps divides by the tp degree too)
  const { batch, seqLen, mesh } = r.schedule.graph.meta;
  const tp = mesh?.tp ?? 1;
  const stepS = r.metrics.stepTimeUs / 1e6;
  const peaks = allocatorPeaks(r.schedule.graph, allocationStreamOf(r.backend));
  return { tokensPerSecPerGpu: stepS > 0 ? (batch * seqLen) / tp / stepS : 0, ...peaks };
}
