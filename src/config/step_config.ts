// SimConfig → StepConfig: the fields of the run config the step-graph builder reads, with the
// preset defaults resolved (activation checkpointing: torchtitan's train config per flavor).

import type { ActivationCheckpointing, StepConfig } from '../graph/config';
import { TRAIN_AC_MODE } from '../model';
import { resolveMesh } from './mesh';
import type { SimConfig } from './schema';

/** The AC mode a config runs with: its own, or (null) the preset's torchtitan train config. */
export function activationCheckpointingOf(
  cfg: Pick<SimConfig, 'model' | 'activationCheckpointing'>,
): ActivationCheckpointing {
  return cfg.activationCheckpointing ?? TRAIN_AC_MODE[cfg.model];
}

/** The StepConfig of a SimConfig (SimpleFSDP on cfg.ranks ranks). */
export function stepConfigOf(cfg: SimConfig): StepConfig {
  return {
    model: cfg.model,
    worldSize: cfg.ranks,
    ...(cfg.localBatch !== null ? { batch: cfg.localBatch } : {}),
    ...(cfg.seqLen !== null ? { seqLen: cfg.seqLen } : {}),
    paramDtype: cfg.paramDtype,
    reduceDtype: cfg.reduceDtype,
    activationCheckpointing: activationCheckpointingOf(cfg),
    mesh: resolveMesh(cfg.ranks, cfg.parallelism),
    ...(cfg.seqParallelGatherCopy ? { seqParallelGatherCopy: true } : {}),
    reshardAfterForward: cfg.reshardAfterForward,
    compileMode: cfg.compileMode,
    memoryPolicy: cfg.memoryPolicy,
  };
}
