// What the backward recomputes and which parameters it gathers again, from torchtitan's knobs:
//  - `parallelism.fsdp_reshard_after_forward` (default / always / never): torchtitan's
//    get_fsdp_reshard_after_forward_policy — 'default' reshards unless pipeline parallel is on
//    (fsdp-sim has no pipeline parallel, so 'default' reshards).
//  - `compile.mode`: 'jit' is torch.compile with aot_autograd — the joint graph is partitioned
//    into a forward and a backward graph, and SimpleFSDP's joint pass tags every parameter
//    all-gather MUST_RECOMPUTE (reshard) or MUST_SAVE (never), so a resharded parameter is
//    gathered again in the backward; eager activation_checkpoint.mode decides the recompute.
//    'aot_fx_trace' is graph_trainer's one traced forward-loss-backward graph: nothing is
//    partitioned, the passes run once over it, and `compile.memory_policy` tags what the
//    backward recomputes (its remat pass copies those nodes into the backward).
//  - graph_trainer's memory policies tag only nodes inside the transformer blocks:
//    'default' saves the compute-intensive ops (mm, SDPA, reduce_scatter) and recomputes the
//    rest, a block's parameter all-gathers too unless reshard is off (its force_save_nodes);
//    'full' recomputes the block but its output; 'eager' is the eager op SAC (every second mm
//    recomputed, without the eager policy's forced recompute of the router gate: sac_policy.ts);
//    'sac_and_offload' is 'default' and then offloads the saved activations of every block but
//    the last to host memory (cpu_offload.ts). On MoE blocks 'default' also saves topk and the
//    all-to-alls and recomputes the grouped GEMMs (sac_policy.ts). Only 'default' and
//    'sac_and_offload' read the reshard policy — 'full' and 'eager' re-gather a block's parameters
//    either way.
//  - 'none' is no value of graph_trainer's `--compile.memory_policy`: it is graph_trainer before
//    the flag (torchtitan #3060, 2026-04-23), whose aot_fx_trace recomputed nothing and never
//    re-gathered — the graph PR #2961's published runs traced
//    (test/unit/graph/torch_tp_joint.test.ts). torchtitanFlags has no flag for it.
// Upstream: torchtitan/distributed/fsdp.py, experiments/simple_fsdp/backend.py,
// experiments/graph_trainer/memory_policy.py, configs.py (memory_policy's Literal).

import type { ActivationCheckpointing } from '../model';

export const RESHARD_POLICIES = ['default', 'always', 'never'] as const;
export type ReshardPolicy = (typeof RESHARD_POLICIES)[number];
export const COMPILE_MODES = ['jit', 'aot_fx_trace'] as const;
export type CompileMode = (typeof COMPILE_MODES)[number];
/** graph_trainer's `compile.memory_policy` values, then 'none' (graph_trainer before it, see above). */
export const MEMORY_POLICIES = ['default', 'full', 'eager', 'sac_and_offload', 'none'] as const;
export type MemoryPolicy = (typeof MEMORY_POLICIES)[number];

/** torchtitan's get_fsdp_reshard_after_forward_policy. */
export function reshardsAfterForward(policy: ReshardPolicy, ppEnabled = false): boolean {
  return policy === 'always' || (policy === 'default' && !ppEnabled);
}

/** Which activations a selective recompute keeps: the eager op policy's, graph_trainer's eager or default. */
export type SavePolicy = 'eager' | 'graph_eager' | 'graph_default';

export interface RecomputePlan {
  /** The recompute the graph has: none, a whole block (full) or what the save policy leaves. */
  readonly activationCheckpointing: ActivationCheckpointing;
  readonly savePolicy: SavePolicy;
  /** A block's parameters are gathered again for its backward (else the forward's are read). */
  readonly regatherBlocks: boolean;
  /** The parameters outside the blocks (final norm, output) are gathered again. */
  readonly regatherOutside: boolean;
  /** One forward-backward graph (aot_fx_trace): graph passes run once over both phases. */
  readonly joint: boolean;
  /** Saved block activations go to host memory and back (graph_trainer's apply_cpu_offload_pass). */
  readonly cpuOffload: boolean;
}

type PolicyPlan = Pick<RecomputePlan, 'activationCheckpointing' | 'savePolicy' | 'regatherBlocks'>;

export interface RecomputeKnobs {
  readonly compileMode: CompileMode;
  readonly reshardAfterForward: ReshardPolicy;
  readonly memoryPolicy: MemoryPolicy;
  readonly activationCheckpointing: ActivationCheckpointing;
}

export function recomputePlan(k: RecomputeKnobs): RecomputePlan {
  const reshard = reshardsAfterForward(k.reshardAfterForward);
  if (k.compileMode === 'jit') {
    const ac = k.activationCheckpointing;
    return {
      activationCheckpointing: ac,
      savePolicy: 'eager',
      regatherBlocks: reshard,
      regatherOutside: reshard,
      joint: false,
      cpuOffload: false,
    };
  }
  const sac: PolicyPlan = {
    activationCheckpointing: 'selective',
    savePolicy: 'graph_default',
    regatherBlocks: reshard,
  };
  const byPolicy: Record<MemoryPolicy, PolicyPlan> = {
    default: sac,
    full: { activationCheckpointing: 'full', savePolicy: 'eager', regatherBlocks: true },
    eager: { activationCheckpointing: 'selective', savePolicy: 'graph_eager', regatherBlocks: true },
    sac_and_offload: sac, // _sac_and_offload_memory_policy_pass: the default pass, then the offload tags
    none: { activationCheckpointing: 'none', savePolicy: 'eager', regatherBlocks: false },
  };
  const cpuOffload = k.memoryPolicy === 'sac_and_offload';
  return { ...byPolicy[k.memoryPolicy], regatherOutside: false, joint: true, cpuOffload };
}
