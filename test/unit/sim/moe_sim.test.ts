// Simulating an MoE step with expert parallel: the streams torchtitan's SimpleFSDP + EP trace
// shows (pytorch/torchtitan PR #1529: FSDP on the dense group, all-to-all on ep, FSDP on the
// expert group, each its own stream), per-rank state against a hand count, and the routing
// imbalance knob slowing the step.
import { describe, expect, it } from 'vitest';
import { runBackend } from '../../../src/backends';
import { makeCostModel } from '../../../src/estimate';
import { buildStepGraph, paramTensorIds } from '../../../src/graph';
import { MODEL_PRESETS, paramCount } from '../../../src/model';
import { simulate } from '../../../src/sim';
import { persistentBytes } from '../../../src/sim/memory';

const cost = makeCostModel({ hardware: 'h100', network: 'nvlink-ib' });
const B = 1;
const S = 1024;
const graphOf = (ep: number, moeLoadImbalance = 1) =>
  buildStepGraph({
    model: 'dsv3-16b',
    worldSize: 8,
    batch: B,
    seqLen: S,
    moeLoadImbalance,
    mesh: { dpReplicate: 1, dpShard: 8, tp: 1, ep },
  });

describe('dsv3-16b on FSDP 8 × EP 2', () => {
  it('runs the dense FSDP, the all-to-alls and the expert FSDP on three streams, without a hang', () => {
    const res = simulate({ worldSize: 8, schedules: runBackend('aot_eager', graphOf(2), cost), cost });
    expect(res.mismatch).toBeUndefined();
    const comm = new Set(res.events.filter((e) => e.stream.startsWith('comm:')).map((e) => e.stream));
    expect(comm).toEqual(new Set(['comm:dp', 'comm:ep', 'comm:efsdp']));
    const onEp = res.events.filter((e) => e.stream === 'comm:ep');
    expect(onEp.length).toBeGreaterThan(0);
    expect(onEp.every((e) => e.kind === 'all_to_all')).toBe(true);
  });

  it('keeps 1/8 of every parameter per rank, with or without EP: shard, exp_avg, exp_avg_sq in fp32', () => {
    // every dsv3-16b dim divides by 8 (vocab 102400, kv_a 576, 64 experts = 2 ep × 4 efsdp × 8)
    const tokens = 2 * B * S * 4; // the rank's token ids and targets, i32
    const hand = (paramCount(MODEL_PRESETS['dsv3-16b']) / 8) * 3 * 4 + tokens;
    for (const ep of [1, 2]) expect(persistentBytes(graphOf(ep)), `ep ${ep}`).toBe(hand);
    const w1 = paramTensorIds('layers.1.moe.routed_experts.inner_experts.w1_EFD').shard;
    expect(graphOf(2).tensors[w1].shape).toEqual([8, 1408, 2048]); // 32 experts on this ep rank, 8 per efsdp rank
  });

  it('lowers the peak with full activation checkpointing, at the cost of a longer step', () => {
    const run = (ac: 'none' | 'full') => {
      // the config's 4 × 4096 tokens per rank, where activations outweigh the sharded state
      const g = buildStepGraph({
        model: 'dsv3-16b',
        worldSize: 8,
        activationCheckpointing: ac,
        mesh: { dpReplicate: 1, dpShard: 8, tp: 1, ep: 2 },
      });
      const res = simulate({ worldSize: 8, schedules: runBackend('aot_eager', g, cost), cost });
      return { peak: res.memory[0].peakBytes, step: res.stepUs };
    };
    const none = run('none');
    const full = run('full');
    expect(full.peak).toBeLessThan(none.peak);
    expect(full.step).toBeGreaterThan(none.step);
  });

  it('takes longer the more the busiest rank receives', () => {
    const step = (imbalance: number) =>
      simulate({ worldSize: 8, schedules: runBackend('aot_eager', graphOf(2, imbalance), cost), cost }).stepUs;
    expect(step(1.5)).toBeGreaterThan(step(1));
    expect(step(2)).toBeGreaterThan(step(1.5));
  });
});
