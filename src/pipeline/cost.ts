// Cost models of a run: the base model from the config's hardware / network (with overrides),
// per-rank jitter and straggler, and what the backends plan with (aligned median, or each
// rank's own estimates when alignment is off — the case where ranks can disagree).

import { cudaGraphsOn, type SimConfig } from '../config';
import {
  NETWORK_PRESETS,
  alignCostModels,
  jitteredCostModels,
  makeCostModel,
  type NetworkPreset,
  type RingNetwork,
} from '../estimate';
import type { CostModel } from '../estimate';
import type { StepGraph } from '../graph';

export interface CostOptions {
  /** Measured compute times by node name, µs (live 'measured' mode); roofline for the rest. */
  readonly measuredUs?: Readonly<Record<string, number>>;
  /** Multiplies every compute time (default 1). */
  readonly computeScale?: number;
  /** Multiplies every collective time (default 1). */
  readonly commScale?: number;
}

export interface RunCosts {
  /** What the backends plan with: one shared model, or one per rank (alignment off + noise). */
  readonly plan: CostModel | readonly CostModel[];
  /** What the simulator times with: one shared model (symmetric ranks) or one per rank. */
  readonly time: CostModel | readonly CostModel[];
  readonly label: string;
}

/**
 * The network preset with the config's overrides. An override makes it an α-β ring: a ring preset
 * keeps its other constants; nccl-analytical (torch's fixed formula) starts from nvlink-ib's ring.
 * bandwidthGBps sets the bus bandwidth inside and across nodes, latencyUs the per-step α of both.
 */
export function networkFor(cfg: SimConfig): NetworkPreset {
  // gpus_per_node (parallelism) sets where a group leaves its node, for every preset
  const preset = { ...NETWORK_PRESETS[cfg.network], gpusPerNode: cfg.parallelism.gpus_per_node };
  if (cfg.bandwidthGBps === null && cfg.latencyUs === null) return preset;
  const base: RingNetwork = preset.kind === 'ring' ? preset : (NETWORK_PRESETS['nvlink-ib'] as RingNetwork);
  const bw = cfg.bandwidthGBps === null ? undefined : cfg.bandwidthGBps * 1e9; // bytes/s
  const a = cfg.latencyUs ?? undefined;
  const alpha = a !== undefined ? ` α ${a} µs` : '';
  return {
    ...base,
    name: `${cfg.network}${bw !== undefined ? ` ${cfg.bandwidthGBps} GB/s` : ''}${alpha}`,
    betaIntraBytesPerS: bw ?? base.betaIntraBytesPerS,
    betaInterBytesPerS: bw ?? base.betaInterBytesPerS,
    alphaIntraUs: a ?? base.alphaIntraUs,
    alphaInterUs: a ?? base.alphaInterUs,
  };
}

/** The config's base cost model (no noise): hardware roofline in paramDtype + the network, CUDA graphs or not. */
function baseCostModel(cfg: SimConfig, opts: CostOptions = {}): CostModel {
  return makeCostModel({
    hardware: cfg.hardware,
    network: networkFor(cfg),
    computeDtype: cfg.paramDtype,
    cudaGraphs: cudaGraphsOn(cfg),
    ...(opts.measuredUs ? { measuredUs: opts.measuredUs } : {}),
    ...(opts.computeScale !== undefined ? { computeScale: opts.computeScale } : {}),
    ...(opts.commScale !== undefined ? { commScale: opts.commScale } : {}),
  });
}

/**
 * Plan and timing cost models for `worldSize` ranks. No jitter and no straggler → one shared model
 * (ranks symmetric). Otherwise each rank is timed with its own model; backends plan with the
 * median over ranks when alignment is on (one shared schedule), else with each rank's own.
 */
export function runCosts(cfg: SimConfig, graph: StepGraph, worldSize: number, opts: CostOptions = {}): RunCosts {
  const base = baseCostModel(cfg, opts);
  const straggler =
    cfg.straggler.rank !== null && cfg.straggler.rank < worldSize && cfg.straggler.factor !== 1
      ? { rank: cfg.straggler.rank, factor: cfg.straggler.factor }
      : undefined;
  if (cfg.jitterPct === 0 && !straggler) return { plan: base, time: base, label: base.label };
  const perRank = jitteredCostModels(base, worldSize, {
    jitterPct: cfg.jitterPct,
    seed: cfg.seed,
    ...(straggler ? { straggler } : {}),
  });
  const plan = cfg.alignment ? alignCostModels(perRank, graph) : perRank;
  const jitter = cfg.jitterPct > 0 ? ` ±${cfg.jitterPct}%` : '';
  const noise = `${jitter}${straggler ? ` straggler rank ${straggler.rank} ×${straggler.factor}` : ''}`;
  return { plan, time: perRank, label: `${base.label}${noise}, ${cfg.alignment ? 'aligned (median)' : 'unaligned'}` };
}
