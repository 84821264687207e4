// Which of graph_trainer's optional passes a config runs (torchtitan experiments/graph_trainer/
// passes.py). cudagraph_pass ends every aot_fx_trace pass list unless `--compile.disable_passes
// cudagraph_pass` (construct_default_graph_passes) and jit mode never runs it: `cudaGraphs` null is
// that default, 'on' / 'off' override it. reassign_collective_pgs_pass runs in the aot_fx_trace
// list when `--compile.enable_fsdp_ag_rs_overlap` is set (compile_time_passes); FSDP2 in eager
// mode has no traced graph to run it on. schedule_fsdp_comms_to_dense_regions_pass runs with
// `--compile.enable_fsdp_dense_region_overlap`, after the transformer-block bucketing it checks
// (strict bucket counts): fsdp-sim's transformer_block.

import type { BackendName } from '../backends';
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

/** Whether `backend`'s schedule runs schedule_fsdp_comms_to_dense_regions_pass (transformer_block only). */
export function fsdpDenseRegionOverlapOn(
  cfg: Pick<SimConfig, 'fsdpDenseRegionOverlap' | 'compileMode'>,
  backend: BackendName,
): boolean {
  return cfg.fsdpDenseRegionOverlap && cfg.compileMode === 'aot_fx_trace' && backend === 'transformer_block';
}
