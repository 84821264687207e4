// The compiled loss (torchtitan `compile.components = ["loss"]`, knob compileLoss): the loss nodes
// carry attrs.compiled, the caching allocator sees no fp32 [T, V] tensor (only the [T] rows the
// backward needs), the cost model prices inductor's fused kernels (the nodes' own bytes), and
// dsv3-16b's train config, which compiles its loss, sheds the eager loss's fp32 tensors at its peak.
import { describe, expect, it } from 'vitest';
import { runBackend } from '../../../src/backends';
import { configFromFlags } from '../../../src/cli/flags';
import {
  configToQuery,
  DEFAULT_CONFIG,
  parseConfigQuery,
  type SimConfig,
  stepConfigOf,
  validateConfig,
} from '../../../src/config';
import { compileLossOf } from '../../../src/config/step_config';
import { HARDWARE_PRESETS, makeCostModel } from '../../../src/estimate';
import { eagerBytes } from '../../../src/estimate/compute';
import { kernelLaunchUs } from '../../../src/estimate/hardware';
import { buildStepGraph, type GraphNode, type StepGraph } from '../../../src/graph';
import { MODEL_NAMES } from '../../../src/model';
import { allocatorPeaks } from '../../../src/sim';
import { hiddenTensors } from '../../../src/sim/hidden_tensors';

const MiB = 2 ** 20;
const cost = makeCostModel({ hardware: 'h100', network: 'nvlink-ib' });

function configOf(over: Partial<SimConfig>): SimConfig {
  const r = validateConfig({ ...DEFAULT_CONFIG, ...over });
  if (!r.ok) throw r.error;
  return r.value;
}

const graphOf = (over: Partial<SimConfig>): StepGraph => buildStepGraph(stepConfigOf(configOf(over)));
const lossNode = (g: StepGraph, op: 'cross_entropy' | 'cross_entropy_bwd'): GraphNode => {
  const n = g.nodes.find((x) => x.op === op);
  if (n === undefined) throw new Error(`no ${op} node`);
  return n;
};

// llama3-8b on 8 ranks: local batch 1 × seq 8192 tokens, vocab 128256, bf16 logits
const T = 8192;
const V = 128256;
const LLAMA = { model: 'llama3-8b', ranks: 8 } as const;

describe('compileLoss on the loss nodes and the allocator', () => {
  it('marks both loss nodes compiled only when the knob is on', () => {
    for (const [knob, compiled] of [
      ['on', true],
      ['off', false],
    ] as const) {
      const g = graphOf({ ...LLAMA, compileLoss: knob });
      for (const op of ['cross_entropy', 'cross_entropy_bwd'] as const) {
        expect(lossNode(g, op).attrs?.compiled === true, `${knob} ${op}`).toBe(compiled);
      }
    }
  });

  it('on: no fp32 [T, V] hidden allocation, only the [T] fp32 row max and log-sum-exp, saved to the backward', () => {
    const g = graphOf({ ...LLAMA, compileLoss: 'on' });
    const hidden = hiddenTensors(g.nodes);
    expect(hidden.map((h) => h.bytes)).toEqual([2 * T * 4]);
    const fwd = g.nodes.findIndex((n) => n.op === 'cross_entropy');
    const bwd = g.nodes.findIndex((n) => n.op === 'cross_entropy_bwd');
    expect(hidden[0].alloc).toBeLessThan(fwd);
    expect(hidden[0].free).toBeGreaterThan(bwd - 1);
    expect(hidden[0].free).toBeLessThan(bwd);
  });

  it('off: the eager loss keeps its four fp32 [T, V] tensors', () => {
    const fp32Logits = T * V * 4;
    const hidden = hiddenTensors(graphOf({ ...LLAMA, compileLoss: 'off' }).nodes);
    expect(hidden.map((h) => h.bytes)).toEqual([fp32Logits, fp32Logits, fp32Logits, fp32Logits]);
  });
});

describe('compileLoss in the cost model', () => {
  const hw = HARDWARE_PRESETS.h100;
  const hbm = hw.hbmBytesPerS * (hw.achieved?.hbm ?? 1);
  const launch = kernelLaunchUs(hw, false);

  it('on: the loss moves its own inputs and outputs: one read of the logits forward, read + write backward', () => {
    const g = graphOf({ ...LLAMA, compileLoss: 'on' });
    // forward: logits bf16 read, targets i32 read, the fp32 loss written
    const fwdBytes = T * V * 2 + T * 4 + 4;
    // backward: logits bf16 read, targets read, the bf16 gradient of the logits written
    const bwdBytes = T * V * 2 + T * 4 + T * V * 2;
    const fwd = lossNode(g, 'cross_entropy');
    const bwd = lossNode(g, 'cross_entropy_bwd');
    expect(eagerBytes(fwd)).toBe(fwdBytes);
    expect(eagerBytes(bwd)).toBe(bwdBytes);
    // memory-bound on the h100: its time is those bytes at the achieved HBM rate, plus one launch
    expect(cost.computeUs(fwd)).toBeCloseTo((fwdBytes / hbm) * 1e6 + launch, 6);
    expect(cost.computeUs(bwd)).toBeCloseTo((bwdBytes / hbm) * 1e6 + launch, 6);
  });

  it('off: the eager aten ops, 18 B per logit forward and 22 B backward, unchanged', () => {
    const g = graphOf({ ...LLAMA, compileLoss: 'off' });
    expect(eagerBytes(lossNode(g, 'cross_entropy'))).toBe(18 * T * V);
    expect(eagerBytes(lossNode(g, 'cross_entropy_bwd'))).toBe(22 * T * V);
    expect(cost.computeUs(lossNode(g, 'cross_entropy'))).toBeCloseTo(((18 * T * V) / hbm) * 1e6 + launch, 6);
  });
});

describe("dsv3-16b's train config compiles its loss", () => {
  // torchtitan deepseek_v3_16b (b5bcd76): 4 × 4096 tokens per rank, ep 8, selective AC; h100 80 GB
  const DSV3: Partial<SimConfig> = {
    model: 'dsv3-16b',
    ranks: 8,
    hardware: 'h100',
    parallelism: { ...DEFAULT_CONFIG.parallelism, expert_parallel_degree: 8 },
  };
  const peaksOf = (compileLoss: SimConfig['compileLoss']) =>
    allocatorPeaks(runBackend('aot_eager', graphOf({ ...DSV3, compileLoss }), cost).graph);

  it('defaults on for dsv3-16b, dsv3-671b and llama3-405b, off for every other preset', () => {
    const on = MODEL_NAMES.filter((model) => compileLossOf({ model, compileLoss: null }));
    expect(on).toEqual(['llama3-405b', 'dsv3-16b', 'dsv3-671b']);
    expect(compileLossOf({ model: 'dsv3-16b', compileLoss: 'off' })).toBe(false);
    expect(compileLossOf({ model: 'llama3-8b', compileLoss: 'on' })).toBe(true);
  });

  it('lowers the peak reserved by the eager fp32 tensors live at the loss backward, less the bf16 gradient', () => {
    const tokens = 4 * 4096;
    const fp32Logits = tokens * 102400 * 4; // 6.25 GiB
    const eager = peaksOf('off');
    const compiled = peaksOf('on');
    expect(peaksOf(null)).toEqual(compiled);
    // eager's peak is at log_softmax_backward: the saved log-probabilities, nll_loss_backward's and
    // log_softmax_backward's fp32 gradients (3 × fp32 [T, V]) beside the bf16 logits; the compiled
    // loss's peak is where the bf16 logits and their bf16 gradient (½ fp32 [T, V]) are both live
    const hand = 3 * fp32Logits - fp32Logits / 2;
    expect(Math.abs(eager.peakReservedBytes - compiled.peakReservedBytes - hand)).toBeLessThan(2 * MiB);
    expect(Math.abs(eager.peakAllocatedBytes - compiled.peakAllocatedBytes - hand)).toBeLessThan(2 * MiB);
  });
});

describe('the compileLoss knob follows from its row', () => {
  it('round-trips through the URL, its flag and --set; refuses other values naming the field', () => {
    const on = parseConfigQuery('compileLoss=on');
    expect(on.errors).toEqual([]);
    expect(on.config.compileLoss).toBe('on');
    expect(configToQuery(on.config)).toBe('compileLoss=on');
    expect(parseConfigQuery(configToQuery({ ...DEFAULT_CONFIG, compileLoss: 'off' })).config.compileLoss).toBe('off');
    expect(configToQuery(DEFAULT_CONFIG)).not.toContain('compileLoss');
    expect(configFromFlags('compare', { 'compile-loss': 'off' }).compileLoss).toBe('off');
    expect(configFromFlags('compare', { set: ['compileLoss=on'] }).compileLoss).toBe('on');
    expect(parseConfigQuery('compileLoss=yes').errors[0]?.message).toBe(
      'compileLoss must be one of [on, off, null], got "yes"',
    );
    expect(() => configFromFlags('compare', { 'compile-loss': 'yes' })).toThrow(/--compile-loss .*\[on, off/);
  });
});
