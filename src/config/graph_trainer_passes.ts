// Which of graph_trainer's optional passes a config runs (torchtitan experiments/graph_trainer/
// passes.py). cudagraph_pass ends every aot_fx_trace pass list unless `--compile.disable_passes
// cudagraph_pass` (construct_default_graph_passes) and jit mode never runs it: `cudaGraphs` null is
// that default, 'on' / 'off' override it. reassign_collective_pgs_pass runs in the aot_fx_trace
// list when `--compile.enable_fsdp_ag_rs_overlap` is set (compile_time_passes); FSDP2 in eager
// mode has no traced graph to run it on. schedule_fsdp_comms_to_dense_regions_pass runs with
// `--compile.enable_fsdp_dense_region_overlap`, after the transformer-block bucketing it checks
// (strict bucket counts): fsdp-sim's transformer_block. `--compile.ep_overlap.enabled` adds the EP
// chunk, process-group and schedule passes to the aot_fx_trace list (construct_default_graph_passes),
// on the traced graph of aot_eager and transformer_block alike (backends/ep_overlap.ts).

import type { BackendName } from '../backends';
import { ConfigError } from '../errors';
import type { EpChunkOptions } from '../graph';
import type { SimConfig } from './schema';

/** The config's CUDA graphs, its compile mode's default resolved. */
export function cudaGraphsOn(cfg: Pick<SimConfig, 'cudaGraphs' | 'compileMode'>): boolean {
  return cfg.cudaGraphs === null ? cfg.compileMode === 'aot_fx_trace' : cfg.cudaGraphs === 'on';
}

/** Whether `backend`'s graph runs reassign_collective_pgs_pass (FSDP all-gathers on their own stream). */
export function fsdpAgRsOverlapOn(
  cfg: Pick<SimConfig, 'fsdpAgRsOverlap' | 'compileMode'>,
  backend: BackendName,
): boolean {
  return cfg.fsdpAgRsOverlap && cfg.compileMode === 'aot_fx_trace' && backend !== 'fsdp2_eager';
}

/**
 * Whether `backend`'s schedule runs schedule_fsdp_comms_to_dense_regions_pass (transformer_block
 * only). With EP overlap on, passes.py ignores it (a warning) unless graph chunking roots at layers.*.moe.
 */
export function fsdpDenseRegionOverlapOn(
  cfg: Pick<SimConfig, 'fsdpDenseRegionOverlap' | 'compileMode'> & Partial<Pick<SimConfig, 'epOverlap'>>,
  backend: BackendName,
): boolean {
  const ep = cfg.epOverlap;
  const ignored =
    ep !== undefined &&
    epOverlapOn({ epOverlap: ep, compileMode: cfg.compileMode }, backend) &&
    (ep.moduleFqn !== 'layers.*.moe' || ep.strategy !== 'graph');
  return (
    cfg.fsdpDenseRegionOverlap && cfg.compileMode === 'aot_fx_trace' && backend === 'transformer_block' && !ignored
  );
}

/** Whether `backend`'s graph runs the EP-overlap passes (the backends graph_trainer traces). */
export function epOverlapOn(cfg: Pick<SimConfig, 'epOverlap' | 'compileMode'>, backend: BackendName): boolean {
  const traced = backend === 'aot_eager' || backend === 'transformer_block';
  return cfg.epOverlap.enabled && cfg.compileMode === 'aot_fx_trace' && traced;
}

/** The regions and dim the EP chunk pass splits. */
export const epOverlapOptionsOf = (cfg: Pick<SimConfig, 'epOverlap'>): EpChunkOptions => ({
  chunkDim: cfg.epOverlap.chunkDim,
  moduleFqn: cfg.epOverlap.moduleFqn,
});

type EpOverlapFields = Pick<SimConfig, 'epOverlap' | 'compileMode' | 'memoryPolicy' | 'parallelism'>;

/**
 * What torchtitan refuses with EP overlap on, by field: jit mode (its passes are aot_fx_trace's),
 * no expert parallel (README: "only meaningful when expert_parallel_degree > 1"), seq chunks of
 * whole blocks (configs.py validate_ep_overlap_config), tensor parallel under graph chunking
 * (passes.py); and what is not modelled: eager chunking under TP, CPU offload.
 */
export function epOverlapError(cfg: EpOverlapFields): ConfigError | undefined {
  const ep = cfg.epOverlap;
  if (!ep.enabled) return undefined;
  if (ep.chunkDim === 'seq' && ep.moduleFqn !== 'layers.*.moe') {
    return new ConfigError(
      'epOverlap.chunkDim',
      "epOverlap.chunkDim must be 'batch' with epOverlap.moduleFqn 'layers.*' (seq: 'layers.*.moe' only)",
    );
  }
  const needs = epOverlapNeeds(cfg);
  // The knob is what conflicts: a URL that switched it on is read back with it off (url.ts).
  return needs === undefined ? undefined : new ConfigError('epOverlap.enabled', `epOverlap.enabled needs ${needs}`);
}

/** What else graph_trainer's EP passes need, worded with the field and its allowed values. */
function epOverlapNeeds(cfg: EpOverlapFields): string | undefined {
  const p = cfg.parallelism;
  if (cfg.compileMode !== 'aot_fx_trace')
    return `compileMode 'aot_fx_trace' (graph_trainer's pass list), got '${cfg.compileMode}'`;
  if (p.expert_parallel_degree <= 1) return `parallelism.expert_parallel_degree > 1, got ${p.expert_parallel_degree}`;
  if (p.tensor_parallel_degree > 1) {
    const why =
      cfg.epOverlap.strategy === 'graph'
        ? 'graph EP chunking does not support TP'
        : 'eager chunking under TP is not modelled';
    return `parallelism.tensor_parallel_degree 1 (${why}), got ${p.tensor_parallel_degree}`;
  }
  if (cfg.memoryPolicy === 'sac_and_offload')
    return "memoryPolicy 'default', 'full', 'eager' or 'none' (CPU offload of chunks is not modelled)";
  return undefined;
}
