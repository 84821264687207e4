// Fills the per-device pipeline cache ahead of the first run(), compiling the entry points the
// backend dispatches with the constants it dispatches them with, concurrently
// (createComputePipelineAsync). Without it each op compiles synchronously on first use
// (~1 s per pipeline on SwiftShader). `pipelinesFor` lists only what a step's ops need.
import type { ComputeOp, MoeOp } from '../../graph';
import { attentionDims, type MoeKernelOp } from '../cpu';
import type { OpAttrs } from '../kernels';
import { type MatmulVariant, MATMUL_VARIANT_INFO, MATMUL_VARIANTS } from './gpu_matmul';
import { dispatchConstants } from './kernel_constants';
import { type Constants, compilePipelineAsync } from './pipelines';
import type { ShaderName } from './shader_registry';

export interface PrecompileOptions {
  /** Only these shaders (default: all). */
  only?: readonly ShaderName[];
  /** Matmul variants to compile (default: all three). */
  matmulVariants?: readonly MatmulVariant[];
}

export async function precompileKernels(device: GPUDevice, opts: PrecompileOptions = {}): Promise<void> {
  const variants = opts.matmulVariants ?? MATMUL_VARIANTS;
  const wanted = ENTRY_POINTS.filter(([s]) => {
    if (opts.only && !opts.only.includes(s)) return false;
    const mm = MATMUL_VARIANTS.find((v) => MATMUL_VARIANT_INFO[v].shader === s);
    return mm === undefined || variants.includes(mm);
  });
  await Promise.all(wanted.map(([s, e]) => compilePipelineAsync(device, s, e, dispatchConstants(s))));
}

/** One pipeline a step dispatches: shader, entry point, override constants. */
export interface PipelineSpec {
  readonly shader: ShaderName;
  readonly entry: string;
  readonly constants: Constants;
}

type KernelEntries = readonly (readonly [ShaderName, string])[];

/** The entry points each op records (gpu_ops.ts, gpu_moe.ts), in dispatch order. */
const OP_ENTRIES: Readonly<Record<Exclude<ComputeOp, 'matmul' | MoeOp> | MoeKernelOp, KernelEntries>> = {
  embedding: [['embedding', 'fwd']],
  embedding_bwd: [['embedding', 'bwd']],
  rms_norm: [['rms_norm', 'fwd']],
  rms_norm_bwd: [
    ['rms_norm', 'bwd_dx'],
    ['rms_norm', 'bwd_dw'],
  ],
  swiglu: [['swiglu', 'fwd']],
  swiglu_bwd: [['swiglu', 'bwd']],
  attention: [['attention', 'fwd']],
  attention_bwd: [
    ['attention', 'bwd_d'],
    ['attention', 'bwd_dq'],
    ['attention', 'bwd_dkv'],
  ],
  add: [['add', 'main']],
  copy: [['add', 'main']],
  cross_entropy: [
    ['cross_entropy', 'rows'],
    ['cross_entropy', 'mean'],
  ],
  cross_entropy_bwd: [['cross_entropy', 'bwd']],
  adamw: [['adamw', 'main']],
  moe_router: [['moe_router', 'fwd']],
  moe_router_bwd: [['moe_router', 'bwd']],
  gather_rows: [['moe_rows', 'gather']],
  scatter_add_rows: [['moe_rows', 'scatter_add']],
  combine_rows: [['moe_rows', 'combine']],
  combine_rows_bwd: [
    ['moe_rows', 'combine_bwd_src'],
    ['moe_rows', 'combine_bwd_w'],
  ],
  grouped_matmul: [['grouped_matmul', 'fwd']],
  grouped_matmul_bwd_x: [['grouped_matmul', 'bwd_x']],
  grouped_matmul_bwd_w: [['grouped_matmul', 'bwd_w']],
};

/** Every (shader, entry point) the backend dispatches, once: each matmul variant's, then each op's. */
export const ENTRY_POINTS: KernelEntries = [
  ...new Map(
    [
      ...MATMUL_VARIANTS.map((v) => [MATMUL_VARIANT_INFO[v].shader, 'main'] as const),
      ...Object.values(OP_ENTRIES).flat(),
    ].map((e) => [`${e[0]}:${e[1]}`, e]),
  ).values(),
];

/**
 * The distinct pipelines `ops` dispatch with `matmulVariant`, in first-use order (what run() will ask
 * getPipeline for, keys included). Ops that are not compute ops are skipped.
 */
export function pipelinesFor(
  ops: readonly { readonly op: string; readonly attrs?: OpAttrs }[],
  matmulVariant: MatmulVariant,
): PipelineSpec[] {
  const out = new Map<string, PipelineSpec>();
  const add = (shader: ShaderName, entry: string, constants: Constants) => {
    const key = `${shader}:${entry}:${JSON.stringify(constants)}`;
    if (!out.has(key)) out.set(key, { shader, entry, constants });
  };
  for (const { op, attrs = {} } of ops) {
    if (op === 'matmul') {
      const info = MATMUL_VARIANT_INFO[matmulVariant];
      add(info.shader, 'main', info.constants);
      continue;
    }
    const entries = OP_ENTRIES[op as keyof typeof OP_ENTRIES];
    if (entries === undefined) continue;
    const shape = op === 'attention' || op === 'attention_bwd' ? attentionDims(op, attrs) : undefined;
    for (const [s, e] of entries) add(s, e, dispatchConstants(s, shape));
  }
  return [...out.values()];
}

/** Compile `specs` concurrently; `onCompiled(done, total)` after each one. */
export async function precompilePipelines(
  device: GPUDevice,
  specs: readonly PipelineSpec[],
  onCompiled?: (done: number, total: number) => void,
): Promise<void> {
  let done = 0;
  onCompiled?.(0, specs.length);
  await Promise.all(
    specs.map(async (p) => {
      await compilePipelineAsync(device, p.shader, p.entry, p.constants);
      onCompiled?.(++done, specs.length);
    }),
  );
}
