// Public API of the run config: the SimConfig schema and defaults, validation, the URL codec.

export {
  DEFAULT_CONFIG,
  defaultConfig,
  type SimConfig,
} from './schema';
export { CONFIG_FIELDS, MAX_RANKS } from './knobs';
export type { KnobHelp } from '../backends';
export {
  FIELD_GROUPS,
  describeAllowed,
  isAllowed,
  getPath,
  setPath,
  type FieldGroup,
  type FieldRule,
  type FieldSpec,
} from './fields';
export { validateConfig, changedFields, fieldSpec, fieldError } from './validate';
export { configToQuery, decodeValue, parseConfigQuery } from './url';
export { FIRST_SCREEN_CONFIG, FIRST_SCREEN_ZOOM, parseLinkQuery } from './first_screen';
export { activationCheckpointingOf, stepConfigOf } from './step_config';
export { torchtitanFlags } from './torchtitan_flags';
export {
  cudaGraphsOn,
  epOverlapOn,
  epOverlapOptionsOf,
  fsdpAgRsOverlapOn,
  fsdpDenseRegionOverlapOn,
} from './graph_trainer_passes';
export { describeHbmFit, hbmFit, type HbmFit } from './hbm_fit';
export { describeMesh, meshOfParallelism, type Mesh, type ParallelismConfig } from './parallelism';
