// The schedule executor: runs one training step of a schedule on one rank, node by node, in the
// schedule's order — compute nodes through the kernel backend, fp32 casts / views / waits as
// aliases, collectives through the SharedArrayBuffer communicator of their process group (on a TP
// mesh the embedding reads its vocabulary slice and the loss is loss-parallel). Storage is released after its
// last reader; persistent state (parameter shards, exp_avg, exp_avg_sq) lives in `ctx.state` and is
// replaced by the optimizer's `*.next` values at the end of the step (paramTensorIds).

import type { Schedule } from '../../backends';
import type { GraphNode, StepGraph } from '../../graph';
import { LOSS, paramTensorIds, type ComputeOp } from '../../graph';
import type { DeviceTensor, ElemType, KernelBackend, OpAttrs } from '../kernels';
import { FsdpSimError } from '../../errors';
import { crossEntropyDims, embeddingDims } from '../cpu';
import { commFor, groupComm, runAllGather, runAllReduce, runReduceScatter, type GroupComms } from './collectives';
import { shardedCrossEntropy, shardedCrossEntropyBwd, type ShardedLogits } from './loss_parallel';
import { MoeRunner } from './moe_exec';
import { PhaseClock } from './phases';
import { elemTypeOf, elemsOf, planGraph, type ExecPlan } from './plan';

export interface StepContext {
  readonly kernels: KernelBackend;
  /** The rank's communicators by process group ('dp' on a 1-D mesh). */
  readonly comms: GroupComms;
  /** This rank's index in its tp group (TP meshes): which vocabulary slice its embedding and logits hold. */
  readonly tpIndex?: number;
  /** Persistent tensors by id (param shards, optimizer state, tokens, targets); updated in place. */
  readonly state: Map<string, DeviceTensor>;
  /** 1-based step number (AdamW bias correction). */
  readonly step: number;
  /** Overrides the graph's AdamW learning rate when set. */
  readonly lr?: number;
  /** Sync after every compute node and record its device time (measured timing mode). */
  readonly measure?: boolean;
  /** The step breakdown: collectives and padding copies are timed into it (kernels time themselves: timedKernels). */
  readonly clock?: PhaseClock;
}

export interface StepResult {
  readonly loss: number; // this rank's local mean loss
  /** Measured µs per compute node name (only with `measure`): device time, or host wall time for CPU kernels. */
  readonly nodeUs?: ReadonlyMap<string, number>;
}

class TensorEnv {
  private readonly map = new Map<string, DeviceTensor>();
  constructor(
    private readonly graph: StepGraph,
    private readonly state: ReadonlyMap<string, DeviceTensor>,
  ) {}

  get(node: GraphNode, id: string): DeviceTensor {
    const t = this.map.get(id) ?? this.state.get(id);
    if (t === undefined) {
      const persistent = this.graph.tensors[id]?.persistent === true;
      throw new FsdpSimError(
        'runtime',
        `node ${node.id} '${node.name}' (${node.kind}) reads '${id}', which ` +
          `${persistent ? 'is persistent but missing from the rank state' : 'no earlier node produced'}`,
      );
    }
    return t;
  }
  set(id: string, t: DeviceTensor): void {
    this.map.set(id, t);
  }
  /** A tensor this step produced (or aliased), if any. */
  find(id: string): DeviceTensor | undefined {
    return this.map.get(id);
  }
}

/** Padded dim-0 shards: the view keeps a prefix of `src` (drop padding) or zero-pads its tail. */
async function copyView(kernels: KernelBackend, src: DeviceTensor, out: DeviceTensor): Promise<void> {
  const host = src.type === 'i32' ? new Int32Array(src.length) : new Float32Array(src.length);
  await kernels.download(src, host);
  const data = src.type === 'i32' ? new Int32Array(out.length) : new Float32Array(out.length);
  data.set(host.subarray(0, Math.min(host.length, data.length)));
  kernels.upload(out, data);
}

const RUN_COLLECTIVE = { all_gather: runAllGather, reduce_scatter: runReduceScatter, all_reduce: runAllReduce };

/** Whether the graph is tensor-parallel: its embedding and loss see one vocabulary slice per tp rank. */
const isTp = (graph: StepGraph): boolean => (graph.meta.mesh?.tp ?? 1) > 1;

/** The node's attrs as the kernel takes them: the step's lr for AdamW, the vocabulary slice's start on TP. */
function kernelAttrs(graph: StepGraph, node: GraphNode, ctx: StepContext): OpAttrs {
  const attrs = node.attrs ?? {};
  if (node.op === 'adamw' && ctx.lr !== undefined) return { ...attrs, lr: ctx.lr };
  if ((node.op === 'embedding' || node.op === 'embedding_bwd') && isTp(graph)) {
    return { ...attrs, vocabStart: (ctx.tpIndex ?? 0) * embeddingDims(node.op, attrs).V };
  }
  return attrs;
}

const isLossParallel = (graph: StepGraph, node: GraphNode): boolean =>
  isTp(graph) && (node.op === 'cross_entropy' || node.op === 'cross_entropy_bwd');

/**
 * The loss (or its gradient) on this rank's logits slice with the tp group; the forward keeps `lse` for the backward.
 */
async function runLossParallel(
  node: GraphNode,
  ctx: StepContext,
  ins: readonly DeviceTensor[],
  outs: readonly DeviceTensor[],
  kept: { lse?: Float64Array },
): Promise<void> {
  const { T, V } = crossEntropyDims(node.op as ComputeOp, node.attrs ?? {});
  const x: ShardedLogits = {
    logits: new Float32Array(T * V),
    targets: new Int32Array(T),
    T,
    V,
    vocabStart: (ctx.tpIndex ?? 0) * V,
  };
  await ctx.kernels.downloadAll([
    { t: ins[0], into: x.logits },
    { t: ins[1], into: x.targets },
  ]);
  if (node.op === 'cross_entropy') {
    const r = shardedCrossEntropy(x, groupComm(ctx.comms, 'tp', `node ${node.id} '${node.name}'`), node.name);
    kept.lse = r.lse;
    ctx.kernels.upload(outs[0], Float32Array.of(r.loss));
    return;
  }
  if (kept.lse === undefined) {
    throw new FsdpSimError('runtime', `node ${node.id} '${node.name}' ran before the loss it differentiates`);
  }
  ctx.kernels.upload(outs[0], shardedCrossEntropyBwd(x, kept.lse));
}

/** One step's working state on this rank: the tensors it made, the storage it owns until their last reader. */
class StepRun {
  readonly plan: ExecPlan;
  readonly env: TensorEnv;
  readonly nodeUs: Map<string, number> | undefined;
  private readonly owned = new Map<string, DeviceTensor>(); // root id → storage this step allocated
  private readonly clock: PhaseClock;
  private readonly lossKept: { lse?: Float64Array } = {};
  private readonly moe: MoeRunner;

  constructor(
    private readonly graph: StepGraph,
    private readonly ctx: StepContext,
  ) {
    this.plan = planGraph(graph);
    this.env = new TensorEnv(graph, ctx.state);
    this.nodeUs = ctx.measure ? new Map<string, number>() : undefined;
    this.clock = ctx.clock ?? new PhaseClock();
    this.moe = new MoeRunner(graph, ctx.kernels, this.createSized);
  }

  private readonly create = (id: string): DeviceTensor =>
    this.createSized(id, elemsOf(this.graph.tensors, id), elemTypeOf(this.graph.tensors, id));

  /** Storage for `id` of `elems` elements (the graph's size, or the rows a MoE op actually routed). */
  private readonly createSized = (id: string, elems: number, type: ElemType): DeviceTensor => {
    const t = this.ctx.kernels.create(id, elems, type);
    this.owned.set(id, t);
    this.env.set(id, t);
    return t;
  };

  /** Runs node i; a promise only when it waits on something (plain compute stays synchronous). */
  runNode(i: number): Promise<void> | undefined {
    const node = this.graph.nodes[i];
    const action = this.plan.actions[i];
    const ins = node.inputs.map((id) => this.env.get(node, id));
    const { kernels, comms } = this.ctx;
    switch (action) {
      case 'compute':
        return this.compute(node, ins);
      case 'alias':
        node.outputs.forEach((id, k) => {
          this.env.set(id, ins[k]);
          this.moe.alias(node.inputs[k], id);
        });
        return undefined;
      case 'copy_view':
        return this.clock.spanAsync('compute', node.name, () =>
          copyView(kernels, ins[0], this.create(node.outputs[0])),
        );
      case 'all_gather':
      case 'reduce_scatter':
      case 'all_reduce': {
        const run = RUN_COLLECTIVE[action];
        const comm = commFor(node, comms);
        return this.clock.spanAsync('collective', node.name, () =>
          run(node, kernels, comm, ins, node.outputs.map(this.create)),
        );
      }
      case 'all_to_all':
        return this.clock.spanAsync('collective', node.name, () => this.moe.allToAll(node, ins, commFor(node, comms)));
    }
  }

  private compute(node: GraphNode, ins: readonly DeviceTensor[]): Promise<void> | undefined {
    if (this.moe.owns(node)) return this.clock.spanAsync('compute', node.name, () => this.computeMoe(node, ins));
    const outs = node.outputs.map(this.create);
    if (isLossParallel(this.graph, node)) {
      return this.clock.spanAsync('collective', node.name, () =>
        runLossParallel(node, this.ctx, ins, outs, this.lossKept),
      );
    }
    const attrs = kernelAttrs(this.graph, node, this.ctx);
    const t0 = this.nodeUs !== undefined ? globalThis.performance.now() : 0;
    this.ctx.kernels.run(node.op as ComputeOp, attrs, ins, outs, this.ctx.step);
    return this.nodeUs === undefined ? undefined : this.timeNode(node.name, t0);
  }

  /** A MoE node (its kernels, and the router's readback of its picks), measured like any compute node. */
  private async computeMoe(node: GraphNode, ins: readonly DeviceTensor[]): Promise<void> {
    const t0 = globalThis.performance.now();
    await this.moe.compute(node, ins);
    if (this.nodeUs !== undefined) await this.timeNode(node.name, t0);
  }

  /** Device time when the backend can time (GPU timestamps), else host wall time (CPU kernels). */
  private async timeNode(name: string, t0: number): Promise<void> {
    const dt = await this.ctx.kernels.sync();
    this.nodeUs?.set(name, dt ?? (globalThis.performance.now() - t0) * 1000);
  }

  /** Releases storage whose last reader was node i. */
  releaseAfter(i: number): void {
    const node = this.graph.nodes[i];
    for (const id of [...node.inputs, ...node.outputs]) {
      const root = this.plan.rootOf.get(id) ?? id;
      if (this.plan.lastUse.get(root) === i) {
        const t = this.owned.get(root);
        if (t !== undefined) {
          this.ctx.kernels.release(t);
          this.owned.delete(root);
        }
      }
    }
  }

  async readLoss(): Promise<number> {
    const lossT = this.env.find(LOSS);
    if (lossT === undefined) throw new FsdpSimError('runtime', `the schedule never produced '${LOSS}'`);
    const lossHost = new Float32Array(1);
    await this.ctx.kernels.download(lossT, lossHost);
    return lossHost[0];
  }

  /** Optimizer results become the next step's persistent state; anything else still owned goes back. */
  finish(): void {
    const { kernels, state } = this.ctx;
    for (const p of this.graph.params) {
      const ids = paramTensorIds(p.name);
      for (const [cur, next] of [
        [ids.shard, ids.shardNext],
        [ids.m, ids.mNext],
        [ids.v, ids.vNext],
      ] as const) {
        const t = this.env.find(next);
        if (t === undefined) continue;
        const old = state.get(cur);
        if (old !== undefined && old !== t) kernels.release(old);
        state.set(cur, t);
        this.owned.delete(this.plan.rootOf.get(next) ?? next);
      }
    }
    // the loss and unread outputs
    for (const t of this.owned.values()) kernels.release(t);
  }
}

/** Run one step of `schedule` on this rank. Tokens and targets must already be in `ctx.state`. */
export async function executeStep(schedule: Schedule, ctx: StepContext): Promise<StepResult> {
  const run = new StepRun(schedule.graph, ctx);
  if (ctx.measure) await ctx.kernels.sync(); // start the first node's timer from an idle queue
  for (let i = 0; i < schedule.graph.nodes.length; i++) {
    const waiting = run.runNode(i);
    if (waiting !== undefined) await waiting;
    run.releaseAfter(i);
  }
  const loss = await run.readLoss();
  run.finish();
  return { loss, nodeUs: run.nodeUs };
}
