// SimpleFSDP step-graph builder: model config → the SPMD program one rank runs for one
// training step (forward with per-parameter all-gathers, backward with re-gathers — unless the
// parameters are kept: recompute_plan.ts — and reduce-scatters, AdamW on the local shards).
// Follows torchtitan experiments/simple_fsdp
// (arXiv 2411.00284) and the aot_autograd joint graph it compiles.

import { paramTable } from '../model';
import { emitBackward } from './backward';
import { resolveStepConfig, type StepConfig } from './config';
import { applyCpuOffload, offloadCandidates } from './cpu_offload';
import { Emitter } from './emitter';
import { emitForward, type ModelCtx } from './forward';
import { emitAdamw, emitParamState, shardParam, type ShardedParam } from './fsdp';
import { epDegree, expertFsdpDegree, isOneDim } from './mesh';
import { TARGETS, TOKENS } from './ops';
import { recomputePlan } from './recompute_plan';
import type { StepGraph } from './types';

/** Builds and returns the step graph; throws ConfigError on a bad config. Deterministic. */
export function buildStepGraph(cfg: StepConfig): StepGraph {
  const r = resolveStepConfig(cfg);
  const e = new Emitter();
  const table = paramTable(r.args);
  const ep = epDegree(r.mesh);
  const sharded: ShardedParam[] = table.map((s) =>
    shardParam(s, s.expert ? expertFsdpDegree(r.mesh) : r.mesh.dpShard, r.mesh.tp, ep),
  );
  const plan = recomputePlan(r);
  const ctx: ModelCtx = {
    e,
    n: r.mesh.dpShard,
    mesh: r.mesh,
    seqParallelGatherCopy: r.seqParallelGatherCopy,
    paramDtype: r.paramDtype,
    reduceDtype: r.reduceDtype,
    args: r.args,
    batch: r.batch,
    seqLen: r.seqLen,
    params: new Map(sharded.map((p) => [p.spec.name, p])),
    activationCheckpointing: plan.activationCheckpointing,
    savePolicy: plan.savePolicy,
    regatherBlocks: plan.regatherBlocks,
    regatherOutside: plan.regatherOutside,
    moeLoadImbalance: r.moeLoadImbalance,
    compiledLoss: r.compileLoss,
  };
  const T = r.batch * r.seqLen;
  // step inputs: this rank's micro-batch (token ids are int32)
  e.tensor(TOKENS, [T], 'i32', { persistent: true });
  e.tensor(TARGETS, [T], 'i32', { persistent: true });
  for (const p of sharded) emitParamState(ctx, p);

  const saved = emitForward(ctx);
  emitBackward(ctx, saved);
  e.phase = 'optimizer';
  e.layer = undefined;
  for (const p of sharded) {
    e.layer = p.spec.layer;
    emitAdamw(ctx, p, r);
  }
  const graph: StepGraph = {
    nodes: e.nodes,
    tensors: e.tensors,
    params: sharded.map((p) => p.info),
    meta: {
      model: r.modelName,
      worldSize: r.worldSize,
      ...(isOneDim(r.mesh) && ep === 1 ? {} : { mesh: r.mesh }), // 1-D graphs keep their JSON as it was
      paramDtype: r.paramDtype,
      reduceDtype: r.reduceDtype,
      batch: r.batch,
      seqLen: r.seqLen,
      ...(plan.joint ? { jointGraph: true } : {}), // split graphs keep their JSON as it was
      source: 'fsdp-sim simple_fsdp builder',
    },
  };
  return plan.cpuOffload ? applyCpuOffload(graph, offloadCandidates(graph)) : graph; // memory policy sac_and_offload
}
