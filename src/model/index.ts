// Public API of src/model: presets, args and the parameter table.
export { MODEL_NAMES, headDim, isMoeLayer, type MlaArgs, type ModelArgs, type ModelName } from './model_args';
export {
  AC_MODES,
  MAX_DIM,
  getModelArgs,
  MODEL_PRESETS,
  TRAIN_AC_MODE,
  TRAIN_COMPILE_LOSS,
  type ActivationCheckpointing,
  isModelName,
  validateModelArgs,
} from './presets';
export { EXPERT_WEIGHTS, paramCount, paramTable, type ParamSpec } from './param_table';
