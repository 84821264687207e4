// The eager kernels torchtitan runs around SDPA, folded into the attention nodes' time
// (src/estimate/compute.ts attentionCompanions): bytes and launches on a shape small enough to
// count by hand, and what each part depends on.
import { describe, expect, it } from 'vitest';
import { HARDWARE_PRESETS, makeCostModel } from '../../../src/estimate';
import { attentionCompanions } from '../../../src/estimate/compute';
import type { GraphNode } from '../../../src/graph/types';

const SHAPE = { batch: 1, seq: 2, heads: 2, kvHeads: 1, headDim: 4 };

function attn(op: 'attention' | 'attention_bwd', attrs: Record<string, number | boolean> = {}): GraphNode {
  return {
    id: 0,
    name: op,
    kind: 'compute',
    op,
    inputs: [],
    outputs: [],
    flops: 0,
    bytesMoved: 0,
    matmulLike: true,
    phase: op === 'attention' ? 'forward' : 'backward',
    attrs: { ...SHAPE, ...attrs },
  };
}

describe('attentionCompanions', () => {
  it('counts RoPE, repeat_kv and the output copy by hand on a 2-token, 2-head (1 kv head) bf16 shape', () => {
    // q = 1·2·2·4 = 16 elements, kv = 8, freqs_cis = 2 · 4 · 4 B = 32 B.
    // RoPE per element (bf16): float() 2 + 4, complex multiply 4 + 4, type_as 4 + 2 = 20 B:
    //   q 16·20 + 32 = 352, k 8·20 + 32 = 192; repeat_kv of k and v: 2 · (8 + 16) · 2 = 96;
    //   output transpose copy 2 · 16 · 2 = 64. In all 704 B in 3 + 3 + 2 + 1 = 9 kernels.
    expect(attentionCompanions(attn('attention'), 'bf16')).toEqual({ bytes: 704, launches: 9 });
    expect(attentionCompanions(attn('attention_bwd'), 'bf16')).toEqual({ bytes: 704, launches: 9 });
  });

  it('has no casts in fp32, no repeat without GQA, and doubles when the backward recomputes them', () => {
    // fp32: RoPE is the multiply alone (8 B per element): 16·8 + 32 + 8·8 + 32 = 256; repeat 2·24·4;
    // transpose 2·16·4: 256 + 192 + 128 = 576 in 1 + 1 + 2 + 1 kernels
    expect(attentionCompanions(attn('attention'), 'fp32')).toEqual({ bytes: 576, launches: 5 });
    const mha = attentionCompanions(attn('attention', { kvHeads: 2 }), 'bf16');
    expect(mha).toEqual({ bytes: 2 * (16 * 20 + 32) + 64, launches: 7 });
    const recomputing = attentionCompanions(attn('attention_bwd', { recomputesPrologue: true }), 'bf16');
    expect(recomputing).toEqual({ bytes: 1408, launches: 18 });
    const other: GraphNode = { ...attn('attention'), op: 'matmul' };
    expect(attentionCompanions(other, 'bf16')).toEqual({ bytes: 0, launches: 0 });
  });

  it('adds their HBM time and launches to the attention node the cost model times', () => {
    const hw = HARDWARE_PRESETS.h100;
    const cost = makeCostModel({ hardware: 'h100', network: 'nvlink-ib' });
    const plain = cost.computeUs({ ...attn('attention'), op: 'matmul' });
    const withCompanions = cost.computeUs(attn('attention'));
    const hbm = hw.hbmBytesPerS * (hw.achieved?.hbm ?? 1);
    // the flops term is 0 on this node, so both are launch-only plus the companions
    expect(withCompanions - plain).toBeCloseTo((704 / hbm) * 1e6 + 9 * hw.launchUs, 9);
  });
});
