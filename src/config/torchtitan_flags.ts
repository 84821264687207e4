// torchtitan's command line for each backend and compile mode, by torchtitan version: the one
// table the knob help and `compare --json` (torchtitanFlags) read. torchtitan moved SimpleFSDP's
// backends from `compile.model_backend_override` (experiments/simple_fsdp, Oct 2025) to
// `compile.backend` + `compile.graph_passes` (Nov 2025) to graph_trainer's `compile.mode` +
// `compile.passes` (2026). FSDP2 in eager mode is torchtitan's default trainer: no compile flags.
// '2026' is graph_trainer as it stands (torchtitan main, Aug 2026): aot_fx_trace, the default mode,
// always runs joint_transformer_block_bucketing_reordering_pass then cudagraph_pass; a pass is
// dropped with `--compile.disable_passes`; `--compile.passes auto_bucketing` is jit-only
// (deprecated); the memory policies are default|full|eager|sac_and_offload; and the core trainer
// (FSDP2) captures CUDA graphs unless `--training.disable_cuda_graphs` (PR #3559).
// Upstream: torchtitan/experiments/simple_fsdp/{backend.py,job_config.py},
// experiments/graph_trainer/{configs.py,passes.py,jit_backend.py}, torchtitan/config/configs.py.

import type { BackendName } from '../backends';
import { reshardsAfterForward, type CompileMode, type MemoryPolicy, type ReshardPolicy } from '../graph';
import { CONFIG_FIELDS } from './knobs';
import { cudaGraphsOn, epOverlapOn, fsdpAgRsOverlapOn, fsdpDenseRegionOverlapOn } from './graph_trainer_passes';
import type { SimConfig } from './schema';

export const TORCHTITAN_VERSIONS = ['2025-10', '2025-11', '2026'] as const;
type TorchtitanVersion = (typeof TORCHTITAN_VERSIONS)[number];

/** Where the run lives in torchtitan at that version. */
const EXPERIMENT: Readonly<Record<TorchtitanVersion, string>> = {
  '2025-10': 'experiments/simple_fsdp',
  '2025-11': 'experiments/simple_fsdp',
  '2026': 'experiments/graph_trainer',
};

const BLOCKS = '--compile.manual_bucketed_modules tok_embeddings,layers.[0-N],norm+output';

/** The backend's flags at each version, jit mode (torch.compile); null: that torchtitan had no such mode. */
const JIT: Readonly<Record<BackendName, Readonly<Record<TorchtitanVersion, string>>>> = {
  aot_eager: {
    '2025-10': '--compile.enable --compile.backend aot_eager',
    '2025-11': '--compile.enable --compile.backend aot_eager',
    '2026': '--compile.mode jit --compile.backend aot_eager',
  },
  aot_eager_autobucketing: {
    '2025-10': '--compile.enable --compile.model_backend_override aot_eager_autobucketing',
    '2025-11': '--compile.enable --compile.backend aot_eager --compile.graph_passes auto_bucketing',
    '2026': '--compile.mode jit --compile.backend aot_eager --compile.passes auto_bucketing',
  },
  transformer_block: {
    '2025-10': `--compile.enable --compile.model_backend_override aot_eager_manualbucketing ${BLOCKS}`,
    '2025-11': '--compile.enable --compile.backend aot_eager --compile.graph_passes transformer_block_bucketing',
    '2026': '--compile.mode jit --compile.backend aot_eager --compile.passes transformer_block_bucketing',
  },
  fsdp2_eager: { '2025-10': '', '2025-11': '', '2026': '' },
};

const BLOCK_PASS = 'joint_transformer_block_bucketing_reordering_pass';

/** graph_trainer's aot_fx_trace (2026 only): the passes it drops; null: it cannot run the backend. */
const AOT_FX_TRACE: Readonly<Record<BackendName, { readonly disable: readonly string[] } | null>> = {
  aot_eager: { disable: [BLOCK_PASS] }, // the traced graph in program order
  transformer_block: { disable: [] }, // its default pass list
  aot_eager_autobucketing: null,
  fsdp2_eager: null,
};

const WHY_NOT_AOT: Readonly<Record<BackendName, string>> = {
  aot_eager: '',
  transformer_block: '',
  aot_eager_autobucketing:
    "graph_trainer's aot_fx_trace buckets per transformer block; auto_bucketing runs in jit mode only " +
    "(PR #2961's branch ran it on the joint graph, Apr 2026)",
  fsdp2_eager: 'FSDP2 runs in eager mode, not as a traced graph',
};

export interface TorchtitanFlags {
  readonly version: TorchtitanVersion;
  readonly experiment: string;
  /** The command-line flags; '' for none, null where that torchtitan cannot run this. */
  readonly flags: string | null;
  readonly why?: string;
}

export interface FlagKnobs {
  readonly compileMode: CompileMode;
  readonly reshardAfterForward: ReshardPolicy;
  readonly memoryPolicy: MemoryPolicy;
  /** Absent: the mode's default (graph_trainer_passes.ts). */
  readonly cudaGraphs?: SimConfig['cudaGraphs'];
  readonly fsdpAgRsOverlap?: boolean;
  readonly fsdpDenseRegionOverlap?: boolean;
  readonly epOverlap?: SimConfig['epOverlap'];
}

type Entry = Omit<TorchtitanFlags, 'version' | 'experiment'>;

/** torchtitan's flags for `backend` under the config's mode and knobs, one entry per version. */
export function torchtitanFlags(backend: BackendName, k: FlagKnobs): TorchtitanFlags[] {
  const graphs = cudaGraphsOn({ cudaGraphs: k.cudaGraphs ?? null, compileMode: k.compileMode });
  return TORCHTITAN_VERSIONS.map((version) => {
    const base = { version, experiment: backend === 'fsdp2_eager' ? 'torchtitan (FSDP2)' : EXPERIMENT[version] };
    return { ...base, ...entryAt(version, backend, k, graphs) };
  });
}

function entryAt(version: TorchtitanVersion, backend: BackendName, k: FlagKnobs, graphs: boolean): Entry {
  if (k.compileMode === 'aot_fx_trace' && version !== '2026') {
    return { flags: null, why: 'no aot_fx_trace before graph_trainer (2026)' };
  }
  if (backend === 'fsdp2_eager') {
    return k.compileMode === 'jit' ? fsdp2Entry(version, graphs) : { flags: null, why: WHY_NOT_AOT[backend] };
  }
  if (k.compileMode === 'jit') {
    if (graphs) return { flags: null, why: 'torch.compile here ran no CUDA graphs (graph_trainer: aot_fx_trace only)' };
    return { flags: withKnobs(JIT[backend][version], k) };
  }
  const aot = AOT_FX_TRACE[backend];
  if (aot === null) return { flags: null, why: WHY_NOT_AOT[backend] };
  if (k.memoryPolicy === 'none') {
    return { flags: null, why: 'graph_trainer has no memory policy that recomputes nothing since SAC (Apr 2026)' };
  }
  const disable = [...aot.disable, ...(graphs ? [] : ['cudagraph_pass'])];
  const flags = [
    '--compile.mode aot_fx_trace',
    disable.length > 0 ? `--compile.disable_passes ${disable.join(',')}` : '',
    fsdpAgRsOverlapOn({ fsdpAgRsOverlap: k.fsdpAgRsOverlap ?? false, compileMode: k.compileMode }, backend)
      ? '--compile.enable_fsdp_ag_rs_overlap'
      : '',
    fsdpDenseRegionOverlapOn(
      { fsdpDenseRegionOverlap: k.fsdpDenseRegionOverlap ?? false, compileMode: k.compileMode },
      backend,
    )
      ? '--compile.enable_fsdp_dense_region_overlap'
      : '',
    epOverlapFlags(k, backend),
  ];
  return { flags: withKnobs(flags.filter(Boolean).join(' '), k) };
}

/** The EP-overlap leaves with a torchtitan flag of their own besides `enabled`. */
const EP_OVERLAP_LEAVES = ['chunkDim', 'strategy', 'moduleFqn'] as const;

/**
 * `--compile.ep_overlap.*` where the EP overlap passes run ('' where they do not): enabled, and each
 * leaf whose value is not its row's default (the rows' defaults are configs.py EpOverlapConfig's).
 */
function epOverlapFlags(k: FlagKnobs, backend: BackendName): string {
  const ep = k.epOverlap;
  if (ep === undefined || !epOverlapOn({ epOverlap: ep, compileMode: k.compileMode }, backend)) return '';
  const changed = EP_OVERLAP_LEAVES.flatMap((leaf) => {
    const row = CONFIG_FIELDS.find((f) => f.path === `epOverlap.${leaf}`);
    return row?.help?.torch === undefined || ep[leaf] === row.default ? [] : [`--${row.help.torch} ${ep[leaf]}`];
  });
  return ['--compile.ep_overlap.enabled', ...changed].join(' ');
}

/** FSDP2 in eager mode: the core trainer captures CUDA graphs by default since Aug 2026 (PR #3559), never before. */
function fsdp2Entry(version: TorchtitanVersion, graphs: boolean): Entry {
  if (version === '2026') return { flags: graphs ? '' : '--training.disable_cuda_graphs' };
  if (graphs) return { flags: null, why: 'torchtitan captured no CUDA graphs for FSDP2 before Aug 2026 (PR #3559)' };
  return { flags: '' };
}

/** The reshard and memory-policy flags where they differ from torchtitan's defaults. */
function withKnobs(flags: string, k: FlagKnobs): string {
  const extra: string[] = [];
  if (!reshardsAfterForward(k.reshardAfterForward)) extra.push('--parallelism.fsdp_reshard_after_forward never');
  if (k.compileMode === 'aot_fx_trace' && k.memoryPolicy !== 'default') {
    extra.push(`--compile.memory_policy ${k.memoryPolicy}`);
  }
  return [flags, ...extra].filter(Boolean).join(' ');
}
