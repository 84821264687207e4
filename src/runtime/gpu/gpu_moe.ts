// The MoE kernels on WebGPU (shaders/moe_router.wgsl, moe_rows.wgsl, grouped_matmul.wgsl): each
// MoeKernelOp (cpu/moe_ops.ts, whose CPU runner is the spec) mapped to its dispatches. The backend's
// run() (gpu_kernels.ts) records them like any op's, on its own queue. Bindings match each shader's
// @binding one-to-one.
import { type CombineDims, combineDims, gatherDims, groupedMatmulDims, routerDims, type MoeKernelOp } from '../cpu';
import type { OpAttrs } from '../kernels';
import { type Bindings, groupsOf, kernel, type PlanContext } from './gpu_ops';
import { packParams, u32 } from './params';
import type { Dispatch } from './queue';
import type { ShaderName } from './shader_registry';

type MoeContext = Pick<PlanContext, 'device' | 'uniform'>;

/** One dispatch of `entry` over `threads` threads (WG a workgroup). */
type Launch = (shader: ShaderName, entry: string, bindings: Bindings, threads: number, label: string) => Dispatch;

/** The uniform buffer of an op's integer parameters. */
type Params = (...v: number[]) => GPUBuffer;

/** The dispatches of one MoE op, in order; `ins` / `outs` as MOE_KERNEL_OPS lists them. */
export function planMoeOp(
  ctx: MoeContext,
  op: MoeKernelOp,
  attrs: OpAttrs,
  ins: readonly GPUBuffer[],
  outs: readonly GPUBuffer[],
): Dispatch[] {
  const launch: Launch = (shader, entry, bindings, threads, label) =>
    kernel(ctx, shader, entry, bindings, groupsOf(threads), label);
  const params: Params = (...v) => ctx.uniform(packParams(v.map(u32)));
  switch (op) {
    case 'moe_router':
    case 'moe_router_bwd':
      return [planRouter(launch, params, op, attrs, ins, outs)];
    case 'gather_rows': {
      const d = gatherDims(op, attrs);
      const bindings: Bindings = [
        [0, ins[0]],
        [1, ins[1]],
        [2, outs[0]],
        [3, params(d.rows, d.cols, 1)],
      ];
      return [launch('moe_rows', 'gather', bindings, d.rows * d.cols, op)];
    }
    case 'scatter_add_rows':
    case 'combine_rows':
    case 'combine_rows_bwd': {
      const d = combineDims(op, attrs);
      return planCombine(launch, op, d, params(d.tokens, d.cols, d.topK), ins, outs);
    }
    case 'grouped_matmul':
    case 'grouped_matmul_bwd_x':
    case 'grouped_matmul_bwd_w':
      return [planGroupedMatmul(launch, params, op, attrs, ins, outs)];
  }
}

/** The router's top-k forward, or its backward to the logits: one thread per token. */
function planRouter(
  launch: Launch,
  params: Params,
  op: 'moe_router' | 'moe_router_bwd',
  attrs: OpAttrs,
  ins: readonly GPUBuffer[],
  outs: readonly GPUBuffer[],
): Dispatch {
  const d = routerDims(op, attrs);
  const p = params(d.tokens, d.experts, d.topK);
  if (op === 'moe_router') {
    const bindings: Bindings = [
      [0, ins[0]],
      [1, outs[0]],
      [2, outs[1]],
      [3, p],
    ];
    return launch('moe_router', 'fwd', bindings, d.tokens, op);
  }
  const bindings: Bindings = [
    [4, ins[0]],
    [1, ins[1]],
    [2, ins[2]],
    [5, outs[0]],
    [3, p],
  ];
  return launch('moe_router', 'bwd', bindings, d.tokens, op);
}

/** A grouped GEMM over each expert's row range: forward, dX or dW. */
function planGroupedMatmul(
  launch: Launch,
  params: Params,
  op: 'grouped_matmul' | 'grouped_matmul_bwd_x' | 'grouped_matmul_bwd_w',
  attrs: OpAttrs,
  ins: readonly GPUBuffer[],
  outs: readonly GPUBuffer[],
): Dispatch {
  const d = groupedMatmulDims(op, attrs);
  const [a, b, offsets] = ins;
  const common: Bindings = [
    [2, offsets],
    [3, params(d.rows, d.experts, d.K, d.N)],
    [4, outs[0]],
  ];
  if (op === 'grouped_matmul') return launch('grouped_matmul', 'fwd', [[0, a], [1, b], ...common], d.rows * d.N, op);
  return op === 'grouped_matmul_bwd_x'
    ? launch('grouped_matmul', 'bwd_x', [[5, a], [1, b], ...common], d.rows * d.K, op)
    : launch('grouped_matmul', 'bwd_w', [[5, a], [0, b], ...common], d.experts * d.K * d.N, op);
}

function planCombine(
  launch: Launch,
  op: 'scatter_add_rows' | 'combine_rows' | 'combine_rows_bwd',
  d: CombineDims,
  p: GPUBuffer,
  ins: readonly GPUBuffer[],
  outs: readonly GPUBuffer[],
): Dispatch[] {
  const [a, posOf] = ins;
  const elems = d.tokens * d.cols;
  if (op !== 'combine_rows_bwd') {
    return op === 'scatter_add_rows'
      ? [
          launch(
            'moe_rows',
            'scatter_add',
            [
              [0, a],
              [1, posOf],
              [2, outs[0]],
              [3, p],
            ],
            elems,
            op,
          ),
        ]
      : [
          launch(
            'moe_rows',
            'combine',
            [
              [0, a],
              [1, posOf],
              [4, ins[2]],
              [2, outs[0]],
              [3, p],
            ],
            elems,
            op,
          ),
        ];
  }
  const [dDst, src, , gates] = ins;
  return [
    launch(
      'moe_rows',
      'combine_bwd_src',
      [
        [5, dDst],
        [1, ins[2]],
        [4, gates],
        [6, outs[0]],
        [3, p],
      ],
      d.tokens * d.topK * d.cols,
      `${op} dSrc`,
    ),
    launch(
      'moe_rows',
      'combine_bwd_w',
      [
        [5, dDst],
        [0, src],
        [1, ins[2]],
        [7, outs[1]],
        [3, p],
      ],
      d.tokens * d.topK,
      `${op} dGates`,
    ),
  ];
}
