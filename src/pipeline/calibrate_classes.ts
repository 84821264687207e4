// The op class of a GPU compute kernel from its name, as profilers name them: cuBLAS / cuBLASLt
// (`sm90_xmma_gemm_…`, `ampere_sgemm_…`, `nvjet_…`, gemv, split-K reduce, `Kernel2`), CUTLASS
// (`cutlass::Kernel<cutlass_80_tensorop_s1688gemm_…>`) are matmul; flash-attention, fmha,
// memory-efficient and cuDNN SDPA kernels are attention; Inductor's triton kernels by their name
// (`triton_tem_fused_mm_…` / `triton_mm` templates are GEMMs, pointwise / reduction / persistent
// kernels elementwise); everything else (ATen elementwise, reductions, norms, copies) elementwise.

export type OpClass = 'matmul' | 'attention' | 'elementwise';
export const OP_CLASSES: readonly OpClass[] = ['matmul', 'attention', 'elementwise'];

const ATTENTION = /flash|fmha|attention|attn|sdpa|mha_|fort_native/i;
const MATMUL = /gemm|gemv|xmma|cublas|cutlass|matmul|wgmma|hmma|tensorop|nvjet|splitkreduce|\bKernel2\b/i;
const TRITON = /(?:^|\W)triton_(\w*)/;

function tritonClass(rest: string): OpClass {
  // Inductor: triton_{poi,red,per}_fused_<ops> are pointwise / reductions even when an op name
  // says mm; only templates (triton_tem_…) and the mm autotuner's kernels run a GEMM or attention
  const template = rest.startsWith('tem_');
  if (template && ATTENTION.test(rest)) return 'attention';
  if ((template || /^(mm|bmm|addmm)(_|$)/.test(rest)) && /(^|_)(b|add)?mm(_|\d|$)|gemm/.test(rest)) return 'matmul';
  return 'elementwise';
}

/** A kernel name's op class (see the header). */
export function opClassOfKernel(name: string): OpClass {
  const t = TRITON.exec(name);
  if (t) return tritonClass(t[1]);
  if (ATTENTION.test(name)) return 'attention';
  if (/cudnn/i.test(name)) return /conv|gemm/i.test(name) ? 'matmul' : 'attention'; // cuDNN's SDPA kernels
  if (MATMUL.test(name)) return 'matmul';
  return 'elementwise';
}

/** The op class of a step-graph compute op: matmuls, attention (fwd and bwd), and the rest. */
export function opClassOfOp(op: string): OpClass {
  if (op === 'matmul') return 'matmul';
  if (op.startsWith('attention')) return 'attention';
  return 'elementwise';
}
