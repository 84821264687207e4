// torchtitan's command line for each backend and compile mode, by torchtitan version: the one
// table the knob help and `compare --json` (torchtitanFlags) read. torchtitan moved SimpleFSDP's
// backends from `compile.model_backend_override` (experiments/simple_fsdp, Oct 2025) to
// `compile.backend` + `compile.graph_passes` (Nov 2025) to graph_trainer's `compile.mode` +
// `compile.passes` (2026). FSDP2 in eager mode is torchtitan's default trainer: no compile flags.
// Upstream: torchtitan/experiments/simple_fsdp/{backend.py,job_config.py},
// experiments/graph_trainer/{configs.py,passes.py}.

import type { BackendName } from '../backends';
import { reshardsAfterForward, type CompileMode, type MemoryPolicy, type ReshardPolicy } from '../graph';

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

/** graph_trainer's aot_fx_trace (2026 only): the one joint graph; its passes as in jit. */
const AOT_FX_TRACE: Readonly<Record<BackendName, string | null>> = {
  aot_eager: '--compile.mode aot_fx_trace --compile.backend aot_eager',
  aot_eager_autobucketing: '--compile.mode aot_fx_trace --compile.backend aot_eager --compile.passes auto_bucketing',
  transformer_block:
    '--compile.mode aot_fx_trace --compile.backend aot_eager --compile.passes transformer_block_bucketing',
  fsdp2_eager: null, // FSDP2 runs in eager mode: there is no traced graph
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
}

/** torchtitan's flags for `backend` under the config's mode and knobs, one entry per version. */
export function torchtitanFlags(backend: BackendName, k: FlagKnobs): TorchtitanFlags[] {
  return TORCHTITAN_VERSIONS.map((version) => {
    const base = { version, experiment: backend === 'fsdp2_eager' ? 'torchtitan (FSDP2)' : EXPERIMENT[version] };
    if (k.compileMode === 'aot_fx_trace' && version !== '2026') {
      return { ...base, flags: null, why: 'no aot_fx_trace before graph_trainer (2026)' };
    }
    const flags = k.compileMode === 'jit' ? JIT[backend][version] : AOT_FX_TRACE[backend];
    if (flags === null) return { ...base, flags, why: 'FSDP2 runs in eager mode, not as a traced graph' };
    return { ...base, flags: withKnobs(flags, k) };
  });
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
