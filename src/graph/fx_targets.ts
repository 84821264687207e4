// Classification of FX targets (aten / c10d op names) into step-graph node kinds, after the
// way torch's overlap scheduler sees them (torch/_inductor/fx_passes/overlap_scheduling.py:
// mm / bmm / addmm / attention fwd+bwd are compute nodes; views, casts and getitem are free).

export type FxClass =
  | 'all_gather'
  | 'reduce_scatter'
  | 'all_reduce'
  | 'all_to_all'
  | 'wait'
  | 'other_collective'
  | 'getitem'
  | 'cast'
  | 'view'
  | 'matmul'
  | 'attention'
  | 'attention_bwd'
  | 'compute';

/** 'aten.mm.default' → 'mm'; '_c10d_functional.wait_tensor.default' → 'wait_tensor'. */
export function fxOpName(target: string): string {
  const m = /^[A-Za-z_][\w]*\.([A-Za-z_][\w]*)(?:\.[\w]+)?$/.exec(target);
  return m ? m[1] : target;
}

const CASTS = new Set(['_to_copy', 'to', 'convert_element_type', '_to_dtype', 'type_as']);
const VIEWS = new Set([
  'view',
  '_unsafe_view',
  'reshape',
  '_reshape_alias',
  't',
  'transpose',
  'permute',
  'expand',
  'unsqueeze',
  'squeeze',
  'detach',
  'alias',
  'slice',
  'select',
  'as_strided',
  'view_as',
  'flatten',
  'unflatten',
  'split',
  'split_with_sizes',
  'chunk',
  'tensor_split',
  'unbind',
  'narrow',
  'diagonal',
  'view_as_real',
  'view_as_complex',
  '_conj', // a lazy conjugate (RoPE's backward): torch's pass counts it a view
  'conj',
  'lift_fresh',
]);
const MATMULS = new Set(['mm', 'addmm', 'bmm', 'baddbmm', 'matmul']);

export function classifyTarget(target: string): FxClass {
  if (/getitem/.test(target)) return 'getitem';
  const op = fxOpName(target);
  if (/c10d/.test(target) || op === 'wait_tensor') {
    if (op === 'all_gather_into_tensor') return 'all_gather';
    if (op === 'reduce_scatter_tensor') return 'reduce_scatter';
    if (op === 'all_reduce') return 'all_reduce';
    if (op === 'all_to_all_single') return 'all_to_all';
    if (op === 'wait_tensor') return 'wait';
    return 'other_collective';
  }
  if (CASTS.has(op)) return 'cast';
  if (VIEWS.has(op)) return 'view';
  if (MATMULS.has(op)) return 'matmul';
  if (
    /^_?(scaled_dot_product|flash_attention|efficient_attention|_scaled_dot_product)/.test(op) ||
    /scaled_dot_product.*attention/.test(op)
  ) {
    return /backward/.test(op) ? 'attention_bwd' : 'attention';
  }
  return 'compute';
}

/** Position of the first matrix operand of a matmul-like op (addmm / baddbmm take the bias first). */
export const matmulFirstOperand = (target: string): number => (/^(addmm|baddbmm)$/.test(fxOpName(target)) ? 1 : 0);
