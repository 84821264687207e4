// The schedule executor: runs one training step of a schedule on one rank, node by node, in the
// schedule's order — compute nodes through the kernel backend, fp32 casts / views / waits as
// aliases, collectives through the SharedArrayBuffer communicator. Storage is released after its
// last reader; persistent state (parameter shards, exp_avg, exp_avg_sq) lives in `ctx.state` and is
// replaced by the optimizer's `*.next` values at the end of the step (paramTensorIds).

import type { Schedule } from '../../backends/types';
import type { GraphNode, StepGraph } from '../../graph/types';
import { LOSS, paramTensorIds, type ComputeOp } from '../../graph/ops';
import type { DeviceTensor, KernelBackend, OpAttrs } from '../kernels';
import { FsdpSimError } from '../../errors';
import { runAllGather, runReduceScatter, type ExecComm } from './collectives';
import { PhaseClock } from './phases';
import { elemTypeOf, elemsOf, planGraph } from './plan';

export interface StepContext {
  readonly kernels: KernelBackend;
  readonly comm: ExecComm;
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
  constructor(private readonly graph: StepGraph, private readonly state: ReadonlyMap<string, DeviceTensor>) {}

  get(node: GraphNode, id: string): DeviceTensor {
    const t = this.map.get(id) ?? this.state.get(id);
    if (t === undefined) {
      const persistent = this.graph.tensors[id]?.persistent === true;
      throw new FsdpSimError(
        'runtime',
        `node ${node.id} '${node.name}' (${node.kind}) reads '${id}', which ${persistent ? 'is persistent but missing from the rank state' : 'no earlier node produced'}`,
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

/** Run one step of `schedule` on this rank. Tokens and targets must already be in `ctx.state`. */
export async function executeStep(schedule: Schedule, ctx: StepContext): Promise<StepResult> {
  const graph = schedule.graph;
  const plan = planGraph(graph);
  const { kernels } = ctx;
  const env = new TensorEnv(graph, ctx.state);
  const owned = new Map<string, DeviceTensor>(); // root id → storage this step allocated
  const nodeUs = ctx.measure ? new Map<string, number>() : undefined;
  const clock = ctx.clock ?? new PhaseClock();
  const create = (id: string): DeviceTensor => {
    const t = kernels.create(id, elemsOf(graph.tensors, id), elemTypeOf(graph.tensors, id));
    owned.set(id, t);
    env.set(id, t);
    return t;
  };
  if (ctx.measure) await kernels.sync(); // start the first node's timer from an idle queue

  for (let i = 0; i < graph.nodes.length; i++) {
    const node = graph.nodes[i];
    const action = plan.actions[i];
    const ins = node.inputs.map((id) => env.get(node, id));
    switch (action) {
      case 'compute': {
        const outs = node.outputs.map(create);
        const attrs: OpAttrs = node.op === 'adamw' && ctx.lr !== undefined ? { ...node.attrs, lr: ctx.lr } : (node.attrs ?? {});
        const t0 = nodeUs !== undefined ? globalThis.performance.now() : 0;
        kernels.run(node.op as ComputeOp, attrs, ins, outs, ctx.step);
        if (nodeUs !== undefined) {
          // Device time when the backend can time (GPU timestamps), else host wall time (CPU kernels).
          const dt = await kernels.sync();
          nodeUs.set(node.name, dt ?? (globalThis.performance.now() - t0) * 1000);
        }
        break;
      }
      case 'alias':
        node.outputs.forEach((id, k) => env.set(id, ins[k]));
        break;
      case 'copy_view':
        await clock.spanAsync('compute', node.name, () => copyView(kernels, ins[0], create(node.outputs[0])));
        break;
      case 'all_gather':
        await clock.spanAsync('collective', node.name, () => runAllGather(node, kernels, ctx.comm, ins, node.outputs.map(create)));
        break;
      case 'reduce_scatter':
        await clock.spanAsync('collective', node.name, () => runReduceScatter(node, kernels, ctx.comm, ins, node.outputs.map(create)));
        break;
    }
    // Release storage whose last reader was this node.
    for (const id of [...node.inputs, ...node.outputs]) {
      const root = plan.rootOf.get(id) ?? id;
      if (plan.lastUse.get(root) === i) {
        const t = owned.get(root);
        if (t !== undefined) {
          kernels.release(t);
          owned.delete(root);
        }
      }
    }
  }

  const lossT = env.find(LOSS);
  if (lossT === undefined) throw new FsdpSimError('runtime', `the schedule never produced '${LOSS}'`);
  const lossHost = new Float32Array(1);
  await kernels.download(lossT, lossHost);

  // Optimizer results become the next step's persistent state.
  for (const p of graph.params) {
    const ids = paramTensorIds(p.name);
    for (const [cur, next] of [[ids.shard, ids.shardNext], [ids.m, ids.mNext], [ids.v, ids.vNext]] as const) {
      const t = env.find(next);
      if (t === undefined) continue;
      const old = ctx.state.get(cur);
      if (old !== undefined && old !== t) kernels.release(old);
      ctx.state.set(cur, t);
      owned.delete(plan.rootOf.get(next) ?? next);
    }
  }
  // Anything still owned (the loss, unread outputs) goes back now.
  for (const t of owned.values()) kernels.release(t);
  return { loss: lossHost[0], nodeUs };
}
