// Maps each ComputeOp (src/graph/ops.ts) to its WGSL dispatches: pipeline, bindings (numbers
// match the @binding of each shader one-to-one), params and workgroup counts. Multi-kernel ops
// (rms_norm_bwd, attention_bwd, cross_entropy) record their dispatches in one pass, in order.
import { ConfigError } from '../../errors';
import { isMoeOp, type ComputeOp } from '../../graph';
import {
  type AttentionDims,
  adamwBiasCorrections,
  adamwAttrs,
  adamwStep,
  attentionDims,
  crossEntropyDims,
  embeddingDims,
  intAttr,
  matmulDims,
  notAKernel,
  rmsNormDims,
} from '../cpu';
import type { OpAttrs } from '../kernels';
import { GpuLimitError } from './gpu_errors';
import { type MatmulVariant, matmulParams, matmulPipeline, matmulWorkgroups } from './gpu_matmul';
import { type Field, f32, packParams, u32 } from './params';
import {
  ATTENTION_MAX_HD,
  ATTENTION_MAX_SEQ,
  ATTENTION_SMALL,
  type AttentionShape,
  dispatchConstants,
  EMBEDDING_BWD_COLS,
  WG,
} from './kernel_constants';
import { getPipeline } from './pipelines';
import type { Dispatch } from './queue';
import type { ShaderName } from './shader_registry';

/** What ops need from the backend while planning. */
export interface PlanContext {
  readonly device: GPUDevice;
  readonly matmulVariant: MatmulVariant;
  uniform(data: ArrayBuffer): GPUBuffer;
  /** A zero-initialised-or-not scratch buffer released after the op is recorded. */
  scratch(elements: number, label: string): GPUBuffer;
}

/** Splits a workgroup count over x and y to stay under maxComputeWorkgroupsPerDimension. */
function grid(device: GPUDevice, groups: number, what: string): [number, number] {
  const max = device.limits.maxComputeWorkgroupsPerDimension;
  const n = Math.max(1, groups);
  const x = Math.min(n, max);
  const y = Math.ceil(n / x);
  if (y > max) throw new GpuLimitError('maxComputeWorkgroupsPerDimension', max, y, `${what} (${groups} workgroups)`);
  return [x, y];
}

export type Bindings = readonly (readonly [number, GPUBuffer])[];

/** One dispatch of `shader`'s `entry` (its override constants from kernel_constants.ts). */
export function kernel(
  ctx: Pick<PlanContext, 'device'>,
  shader: ShaderName,
  entry: string,
  bindings: Bindings,
  groups: number,
  label: string,
  shape?: AttentionShape,
): Dispatch {
  return {
    pipeline: getPipeline(ctx.device, shader, entry, dispatchConstants(shader, shape)),
    bindings,
    workgroups: grid(ctx.device, groups, label),
    label,
  };
}

export const groupsOf = (n: number) => Math.ceil(n / WG);

/** What planning one op reads: its attrs, its tensors' buffers in ops.ts order, a uniform packer. */
interface OpArgs<O extends ComputeOp> {
  readonly ctx: PlanContext;
  readonly op: O;
  readonly attrs: OpAttrs;
  readonly ins: readonly GPUBuffer[];
  readonly outs: readonly GPUBuffer[];
  params(fields: readonly Field[]): GPUBuffer;
}

/** The dispatches of one op, in order; `ins`/`outs` are the tensors' buffers in ops.ts order. */
export function planOp(
  ctx: PlanContext,
  op: ComputeOp,
  attrs: OpAttrs,
  ins: readonly GPUBuffer[],
  outs: readonly GPUBuffer[],
  step?: number,
): Dispatch[] {
  const params = (fields: readonly Field[]) => ctx.uniform(packParams(fields));
  const args = <O extends ComputeOp>(o: O): OpArgs<O> => ({ ctx, op: o, attrs, ins, outs, params });
  if (isMoeOp(op)) throw notAKernel(op);
  switch (op) {
    case 'embedding':
    case 'embedding_bwd':
      return planEmbedding(args(op));
    case 'matmul':
      return planMatmul(args(op));
    case 'rms_norm':
      return planRmsNorm(args(op));
    case 'rms_norm_bwd':
      return planRmsNormBwd(args(op));
    case 'swiglu':
    case 'swiglu_bwd':
      return planSwiglu(args(op));
    case 'attention':
    case 'attention_bwd':
      return planAttention(args(op));
    case 'add':
    case 'copy':
      return planAdd(args(op));
    case 'cross_entropy':
    case 'cross_entropy_bwd':
      return planCrossEntropy(args(op));
    case 'adamw':
      return planAdamw(args(op), step);
    default: {
      const never: never = op;
      throw new ConfigError('op', `unknown compute op ${JSON.stringify(never)}`);
    }
  }
}

function planEmbedding({ ctx, op, attrs, ins, outs, params }: OpArgs<'embedding' | 'embedding_bwd'>): Dispatch[] {
  const d = embeddingDims(op, attrs);
  const p = params([u32(d.V), u32(d.D), u32(d.T), u32(d.vocabStart ?? 0)]);
  return op === 'embedding'
    ? [
        kernel(
          ctx,
          'embedding',
          'fwd',
          [
            [0, ins[0]],
            [1, ins[1]],
            [2, outs[0]],
            [3, p],
          ],
          groupsOf(d.T * d.D),
          op,
        ),
      ]
    : [
        kernel(
          ctx,
          'embedding',
          'bwd',
          [
            [4, ins[0]],
            [1, ins[1]],
            [5, outs[0]],
            [3, p],
          ],
          groupsOf(d.V * Math.ceil(d.D / EMBEDDING_BWD_COLS)),
          op,
        ),
      ];
}

function planMatmul({ ctx, attrs, ins, outs }: OpArgs<'matmul'>): Dispatch[] {
  const d = matmulDims(attrs);
  const v = ctx.matmulVariant;
  return [
    {
      pipeline: matmulPipeline(ctx.device, v),
      label: `matmul ${v}`,
      bindings: [
        [0, ins[0]],
        [1, ins[1]],
        [2, outs[0]],
        [3, ctx.uniform(matmulParams(d))],
      ],
      workgroups: matmulWorkgroups(ctx.device, v, d),
    },
  ];
}

function planRmsNorm({ ctx, op, attrs, ins, outs, params }: OpArgs<'rms_norm'>): Dispatch[] {
  const d = rmsNormDims(op, attrs);
  const p = params([u32(d.rows), u32(d.cols), f32(d.eps)]);
  return [
    kernel(
      ctx,
      'rms_norm',
      'fwd',
      [
        [0, ins[0]],
        [1, ins[1]],
        [2, outs[0]],
        [3, outs[1]],
        [4, p],
      ],
      d.rows,
      op,
    ),
  ];
}

function planRmsNormBwd({ ctx, op, attrs, ins, outs, params }: OpArgs<'rms_norm_bwd'>): Dispatch[] {
  const d = rmsNormDims(op, attrs);
  const p = params([u32(d.rows), u32(d.cols), f32(d.eps)]);
  const [dy, x, w, rstd] = ins;
  const dxBindings: Bindings = [
    [5, dy],
    [0, x],
    [1, w],
    [3, rstd],
    [6, outs[0]],
    [4, p],
  ];
  const dwBindings: Bindings = [
    [5, dy],
    [0, x],
    [3, rstd],
    [7, outs[1]],
    [4, p],
  ];
  return [
    kernel(ctx, 'rms_norm', 'bwd_dx', dxBindings, d.rows, `${op} dx`),
    kernel(ctx, 'rms_norm', 'bwd_dw', dwBindings, groupsOf(d.cols), `${op} dw`),
  ];
}

function planSwiglu({ ctx, op, attrs, ins, outs, params }: OpArgs<'swiglu' | 'swiglu_bwd'>): Dispatch[] {
  const n = intAttr(op, attrs, 'n');
  const p = params([u32(n)]);
  return op === 'swiglu'
    ? [
        kernel(
          ctx,
          'swiglu',
          'fwd',
          [
            [0, ins[0]],
            [1, ins[1]],
            [2, outs[0]],
            [3, p],
          ],
          groupsOf(n),
          op,
        ),
      ]
    : [
        kernel(
          ctx,
          'swiglu',
          'bwd',
          [
            [4, ins[0]],
            [0, ins[1]],
            [1, ins[2]],
            [5, outs[0]],
            [6, outs[1]],
            [3, p],
          ],
          groupsOf(n),
          op,
        ),
      ];
}

function planAttention(args: OpArgs<'attention' | 'attention_bwd'>): Dispatch[] {
  const { op, attrs, params } = args;
  const d = attentionDims(op, attrs);
  checkAttentionShape(op, d);
  // small shapes: a thread per row (attention.wgsl's SMALL path), else a workgroup per row
  const small = d.seq <= ATTENTION_SMALL && d.headDim <= ATTENTION_SMALL;
  const p = params([
    u32(d.batch),
    u32(d.seq),
    u32(d.heads),
    u32(d.kvHeads),
    u32(d.headDim),
    f32(1 / Math.sqrt(d.headDim)),
    u32(small ? 1 : 0),
  ]);
  const groups = (n: number) => (small ? groupsOf(n) : n);
  return op === 'attention' ? planAttentionFwd(args, d, p, groups) : planAttentionBwd(args, d, p, groups);
}

/** The WGSL kernel's bounds on an attention shape, else a ConfigError naming the attribute. */
function checkAttentionShape(op: ComputeOp, d: AttentionDims): void {
  if (d.seq > ATTENTION_MAX_SEQ) {
    throw new ConfigError(`${op}.seq`, `${op}.seq must be ≤ ${ATTENTION_MAX_SEQ} for the WGSL kernel, got ${d.seq}`);
  }
  if (d.headDim > ATTENTION_MAX_HD) {
    const got = `got ${d.headDim}`;
    throw new ConfigError(`${op}.headDim`, `${op}.headDim must be ≤ ${ATTENTION_MAX_HD} for the WGSL kernel, ${got}`);
  }
}

/** Workgroups for `n` rows: the SMALL path packs WG rows into one. */
type RowGroups = (n: number) => number;

function planAttentionFwd(
  { ctx, op, ins, outs }: OpArgs<'attention' | 'attention_bwd'>,
  d: AttentionDims,
  p: GPUBuffer,
  groups: RowGroups,
): Dispatch[] {
  const [q, k, v] = ins;
  const bindings: Bindings = [
    [0, q],
    [1, k],
    [2, v],
    [3, outs[0]],
    [4, outs[1]],
    [5, p],
  ];
  return [kernel(ctx, 'attention', 'fwd', bindings, groups(d.batch * d.heads * d.seq), op, d)];
}

/** Three passes (attention.wgsl): D_i = dO_i·o_i, then dq per query row, then dk and dv per key row. */
function planAttentionBwd(
  { ctx, op, ins, outs }: OpArgs<'attention' | 'attention_bwd'>,
  d: AttentionDims,
  p: GPUBuffer,
  groups: RowGroups,
): Dispatch[] {
  const rows = d.batch * d.heads * d.seq;
  const [dO, q, k, v, o, lse] = ins;
  const D = ctx.scratch(rows, 'attention_bwd D');
  return [
    kernel(
      ctx,
      'attention',
      'bwd_d',
      [
        [6, dO],
        [3, o],
        [7, D],
        [5, p],
      ],
      groupsOf(rows),
      `${op} D`,
      d,
    ),
    kernel(
      ctx,
      'attention',
      'bwd_dq',
      [
        [6, dO],
        [0, q],
        [1, k],
        [2, v],
        [4, lse],
        [7, D],
        [8, outs[0]],
        [5, p],
      ],
      groups(rows),
      `${op} dq`,
      d,
    ),
    kernel(
      ctx,
      'attention',
      'bwd_dkv',
      [
        [6, dO],
        [0, q],
        [1, k],
        [2, v],
        [4, lse],
        [7, D],
        [9, outs[1]],
        [10, outs[2]],
        [5, p],
      ],
      groups(d.batch * d.kvHeads * d.seq),
      `${op} dk dv`,
      d,
    ),
  ];
}

function planAdd({ ctx, op, attrs, ins, outs, params }: OpArgs<'add' | 'copy'>): Dispatch[] {
  // copy is add.wgsl with its copy flag (c = a): no pipeline of its own to compile
  const n = intAttr(op, attrs, 'n');
  const b = op === 'copy' ? ins[0] : ins[1];
  const p = params([u32(n), u32(op === 'copy' ? 1 : 0)]);
  return [
    kernel(
      ctx,
      'add',
      'main',
      [
        [0, ins[0]],
        [1, b],
        [2, outs[0]],
        [3, p],
      ],
      groupsOf(n),
      op,
    ),
  ];
}

function planCrossEntropy({
  ctx,
  op,
  attrs,
  ins,
  outs,
  params,
}: OpArgs<'cross_entropy' | 'cross_entropy_bwd'>): Dispatch[] {
  const d = crossEntropyDims(op, attrs);
  const p = params([u32(d.T), u32(d.V)]);
  if (op === 'cross_entropy_bwd') {
    return [
      kernel(
        ctx,
        'cross_entropy',
        'bwd',
        [
          [0, ins[0]],
          [1, ins[1]],
          [5, outs[0]],
          [4, p],
        ],
        d.T,
        op,
      ),
    ];
  }
  const rowLoss = ctx.scratch(d.T, 'cross_entropy row losses');
  return [
    kernel(
      ctx,
      'cross_entropy',
      'rows',
      [
        [0, ins[0]],
        [1, ins[1]],
        [2, rowLoss],
        [4, p],
      ],
      d.T,
      `${op} rows`,
    ),
    kernel(
      ctx,
      'cross_entropy',
      'mean',
      [
        [2, rowLoss],
        [3, outs[0]],
        [4, p],
      ],
      1,
      `${op} mean`,
    ),
  ];
}

function planAdamw({ ctx, op, attrs, ins, outs, params }: OpArgs<'adamw'>, step: number | undefined): Dispatch[] {
  const h = adamwAttrs(attrs);
  const { bc1, bc2 } = adamwBiasCorrections(h, adamwStep(step));
  const p = params([
    u32(h.n),
    f32(h.lr),
    f32(h.beta1),
    f32(h.beta2),
    f32(h.eps),
    f32(h.weightDecay),
    f32(bc1),
    f32(bc2),
  ]);
  const inputs = ins.map((b, i) => [i, b] as const);
  const outputs = outs.map((b, i) => [4 + i, b] as const);
  const bindings = [...inputs, ...outputs, [7, p] as const];
  return [kernel(ctx, 'adamw', 'main', bindings, groupsOf(h.n), op)];
}
