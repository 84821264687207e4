// The executor runs moe-tiny's step graph as a correct program: on one rank (CPU kernels) the
// gradients AdamW receives — the router's through router_topk_bwd and the combine's scores, the
// grouped expert GEMMs', the shared expert's — equal central finite differences of the executor's
// own loss; measured, every MoE node is timed. (N ranks with expert parallel match this one rank:
// moe_training.test.ts.)
import { describe, expect, it } from 'vitest';
import { TARGETS, TOKENS, isMoeOp, paramTensorIds } from '../../../../src/graph';
import type { ModelArgs } from '../../../../src/model';
import { createCpuKernels } from '../../../../src/runtime/cpu';
import type { CpuTensor } from '../../../../src/runtime/cpu/cpu_kernels';
import { executeStep } from '../../../../src/runtime/exec';
import type { ExecComm } from '../../../../src/runtime/exec/collectives';
import type { DeviceTensor, KernelBackend } from '../../../../src/runtime/kernels';
import { planTraining, type TrainingPlan } from '../../../../src/runtime/training_plan';
import { rng } from '../../../helpers/rng';

/** moe-tiny's shape, smaller: 4 experts, top 2, one shared expert, the second block MoE. */
const SMALL: Partial<ModelArgs> = {
  dim: 16,
  nLayers: 2,
  nHeads: 2,
  nKvHeads: 2,
  vocabSize: 32,
  ffnDim: 24,
  seqLen: 8,
  moe: { numExperts: 4, topK: 2, moeFfnDim: 12, numSharedExperts: 1, nDenseLayers: 1 },
};

function plan(): TrainingPlan {
  return planTraining({
    model: 'moe-tiny',
    modelArgs: SMALL,
    ranks: 1,
    steps: 1,
    backend: 'aot_eager',
    seed: 1,
    kernels: 'cpu',
    collective: 'direct',
    timing: 'preset',
    hardware: 'h100',
    globalBatch: 2,
  });
}

/** The communicator of a group of one: every collective hands the rank its own input. */
const copy = (_: unknown, input: Float32Array, output: Float32Array) => output.set(input);
const SOLO: ExecComm = { worldSize: 1, allGather: copy, reduceScatter: copy, allReduce: copy, allToAll: copy };

/** Full parameters (one rank holds them whole), uniform in ±0.5. */
function initParams(p: TrainingPlan, seed: number): Map<string, Float32Array> {
  const r = rng(seed);
  return new Map(p.graph.params.map((q) => [q.name, Float32Array.from({ length: q.numel }, () => r() - 0.5)]));
}

/** One step's loss at `params`, and the gradient each parameter's AdamW node read. */
async function lossAndGrads(p: TrainingPlan, params: Map<string, Float32Array>, batch: Int32Array[], measure = false) {
  const cpu = createCpuKernels();
  const grads = new Map<string, Float32Array>();
  const kernels: KernelBackend = {
    ...cpu,
    run(op, attrs, inputs, outputs, step) {
      if (op === 'adamw') grads.set(outputs[0].id, Float32Array.from((inputs[1] as CpuTensor).data));
      cpu.run(op, attrs, inputs, outputs, step);
    },
  };
  const state = new Map<string, DeviceTensor>();
  const put = (id: string, data: Float32Array | Int32Array) => {
    const t = kernels.create(id, data.length, data instanceof Int32Array ? 'i32' : 'f32');
    kernels.upload(t, data);
    state.set(id, t);
  };
  for (const [name, data] of params) {
    const ids = paramTensorIds(name);
    put(ids.shard, data);
    put(ids.m, new Float32Array(data.length));
    put(ids.v, new Float32Array(data.length));
  }
  put(TOKENS, batch[0]);
  put(TARGETS, batch[1]);
  const comms = new Map([['dp', SOLO]]);
  const { loss, nodeUs } = await executeStep(p.schedule, { kernels, comms, state, step: 1, measure });
  const byParam = new Map([...params.keys()].map((n) => [n, grads.get(paramTensorIds(n).shardNext)]));
  return { loss, grads: byParam, nodeUs };
}

/** (L(w + ε) − L(w − ε)) / 2ε for entry `at` of parameter `name`. */
async function centralDifference(
  p: TrainingPlan,
  params: Map<string, Float32Array>,
  batch: Int32Array[],
  name: string,
  at: number,
): Promise<number> {
  const eps = 1e-2;
  const loss = async (d: number) => {
    const w = Float32Array.from(params.get(name)!);
    w[at] += d;
    return (await lossAndGrads(p, new Map(params).set(name, w), batch)).loss;
  };
  return ((await loss(eps)) - (await loss(-eps))) / (2 * eps);
}

describe('moe-tiny step graph on the executor', () => {
  it('times every MoE node when measuring, and measuring changes no bit of the loss', async () => {
    const p = plan();
    const params = initParams(p, 11);
    const T = p.graph.meta.batch * p.graph.meta.seqLen;
    const batch = [0, 1].map(() => new Int32Array(T).map((_, i) => (i * 7) % 32));
    const measured = await lossAndGrads(p, params, batch, true);
    const moeNodes = p.graph.nodes.filter((n) => isMoeOp(n.op)).map((n) => n.name);
    expect(moeNodes.length).toBeGreaterThan(5);
    for (const name of moeNodes) expect(measured.nodeUs?.get(name), name).toBeGreaterThanOrEqual(0);
    expect(measured.loss).toBe((await lossAndGrads(p, params, batch)).loss);
  });

  it('gives gradients equal to finite differences of its loss (router, routed and shared experts)', async () => {
    const p = plan();
    const params = initParams(p, 11);
    const r = rng(12);
    const T = p.graph.meta.batch * p.graph.meta.seqLen;
    const batch = [0, 1].map(() => Int32Array.from({ length: T }, () => Math.floor(r() * 32)));
    const { grads } = await lossAndGrads(p, params, batch);
    const checked = [
      'layers.1.moe.router.gate.weight',
      'layers.1.moe.routed_experts.inner_experts.w1_EFD',
      'layers.1.moe.routed_experts.inner_experts.w2_EDF',
      'layers.1.moe.routed_experts.inner_experts.w3_EFD',
      'layers.1.attention.wq.weight',
    ];
    const shared = p.graph.params.find((q) => q.name.startsWith('layers.1.moe.shared_experts'));
    for (const name of [...checked, shared?.name ?? 'no shared expert']) {
      const g = grads.get(name);
      expect(g, name).toBeDefined();
      // the three largest entries: a clear signal over float32 rounding
      const top = [...g!.keys()].sort((a, b) => Math.abs(g![b]) - Math.abs(g![a])).slice(0, 3);
      for (const at of top) {
        const fd = await centralDifference(p, params, batch, name, at);
        expect(Math.abs(g![at]), name).toBeGreaterThan(1e-3);
        const why = `${name}[${at}]: fd ${fd}, grad ${g![at]}`;
        expect(Math.abs(fd - g![at]), why).toBeLessThan(3e-5 + 0.02 * Math.abs(fd));
      }
    }
  });
});
