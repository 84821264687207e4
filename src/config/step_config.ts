// SimConfig → StepConfig: the fields of the run config the step-graph builder reads, with the
// preset defaults resolved (activation checkpointing, the compiled loss: torchtitan's train config per flavor).

import type { ActivationCheckpointing, StepConfig } from '../graph';
import { recomputePlan } from '../graph';
import { TRAIN_AC_MODE, TRAIN_COMPILE_LOSS } from '../model';
import { meshOfParallelism } from './parallelism';
import type { SimConfig } from './schema';

/**
 * The recompute a config runs with: its AC mode, or (null) the preset's torchtitan train config;
 * under aot_fx_trace the memory policy's instead (recompute_plan.ts: graph_trainer reads no AC mode).
 */
export function activationCheckpointingOf(
  cfg: Pick<SimConfig, 'model' | 'activationCheckpointing'> & Partial<Pick<SimConfig, 'compileMode' | 'memoryPolicy'>>,
): ActivationCheckpointing {
  const ac = cfg.activationCheckpointing ?? TRAIN_AC_MODE[cfg.model];
  if (cfg.compileMode !== 'aot_fx_trace') return ac;
  const memoryPolicy = cfg.memoryPolicy ?? 'default';
  const knobs = { compileMode: cfg.compileMode, memoryPolicy, reshardAfterForward: 'default' } as const;
  const plan = recomputePlan({ ...knobs, activationCheckpointing: ac });
  return plan.activationCheckpointing;
}

/** Whether the config's loss is compiled: its compileLoss, or (null) the preset's torchtitan train config. */
export function compileLossOf(cfg: Pick<SimConfig, 'model' | 'compileLoss'>): boolean {
  return cfg.compileLoss === null ? TRAIN_COMPILE_LOSS[cfg.model] : cfg.compileLoss === 'on';
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
    mesh: meshOfParallelism(cfg.ranks, cfg.parallelism),
    ...(cfg.seqParallelGatherCopy ? { seqParallelGatherCopy: true } : {}),
    reshardAfterForward: cfg.reshardAfterForward,
    compileMode: cfg.compileMode,
    memoryPolicy: cfg.memoryPolicy,
    ...(cfg.moeLoadImbalance !== 1 ? { moeLoadImbalance: cfg.moeLoadImbalance } : {}),
    ...(compileLossOf(cfg) ? { compileLoss: true } : {}),
  };
}
