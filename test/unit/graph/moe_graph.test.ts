// The MoE step graph (graph/moe.ts, moe_block.ts) against hand counts for one dsv3-16b MoE block,
// written out from torchtitan's 16B config: D 2048, 16 heads, MLA (q_lora 0, kv_lora 512, qk nope
// 128 + rope 64, v 128), 64 experts of hidden 1408, top-6, 2 shared experts. FSDP 8 × EP 2:
// efsdp = 8 / 2 = 4 ranks, stride 2; ep = 2 consecutive ranks.
import { describe, expect, it } from 'vitest';
import { buildStepGraph, type GraphNode, type StepGraph } from '../../../src/graph';
import { verifyGraph } from '../../../src/graph/verify';
import { B, S, T, D, H, K, F, FS, E, mm, layerNodes } from './dsv3_16b';

const mesh = { dpReplicate: 1, dpShard: 8, tp: 1, ep: 2 };

function build(imbalance = 1, ep = 2): StepGraph {
  const g = buildStepGraph({
    model: 'dsv3-16b',
    worldSize: 8,
    batch: B,
    seqLen: S,
    mesh: { ...mesh, ep },
    moeLoadImbalance: imbalance,
  });
  verifyGraph(g);
  return g;
}

const sumFlops = (ns: readonly GraphNode[], ops: readonly string[]) =>
  ns.filter((n) => ops.includes(String(n.op))).reduce((s, n) => s + n.flops, 0);

/** Forward matmul FLOPs of the block with R routed rows on this rank's experts. */
function handMatmulFlops(R: number): number {
  const mla = mm(T, H * 192, D) + mm(T, 512 + 64, D) + mm(T, H * (128 + 128), 512) + mm(T, D, H * 128);
  const router = mm(T, E, D);
  const experts = 2 * mm(R, F, D) + mm(R, D, F);
  const shared = 2 * mm(T, FS, D) + mm(T, D, FS);
  return mla + router + experts + shared;
}

describe('one dsv3-16b MoE block, FSDP 8 × EP 2', () => {
  it('has the hand-counted matmul and grouped-GEMM FLOPs, forward and (2×) backward', () => {
    const g = build();
    const fwd = sumFlops(layerNodes(g, 'forward'), ['matmul', 'grouped_mm']);
    expect(fwd).toBe(handMatmulFlops(T * K));
    expect(sumFlops(layerNodes(g, 'backward'), ['matmul', 'grouped_mm'])).toBe(2 * fwd);
  });

  it('has MLA attention FLOPs over qk head dim 192 and v head dim 128, causal', () => {
    const attn = layerNodes(build(), 'forward').find((n) => n.op === 'attention')!;
    expect(attn.flops).toBe((2 * B * H * S * S * 192 + 2 * B * H * S * S * 128) / 2);
  });

  it("dispatches and combines by all-to-all on ep: T·k rows sent, the busiest rank's rows received", () => {
    for (const imbalance of [1, 1.5]) {
      const R = Math.ceil(T * K * imbalance);
      const a2a = layerNodes(build(imbalance), 'forward').filter((n) => n.kind === 'all_to_all');
      expect(a2a.map((n) => n.name)).toEqual([
        'layers.1.moe.dispatch.counts.all_to_all',
        'layers.1.moe.dispatch.all_to_all',
        'layers.1.moe.combine.all_to_all',
      ]);
      const [counts, dispatch, combine] = a2a.map((n) => n.collective!);
      expect(counts).toMatchObject({ group: 'ep', groupSize: 2, inputBytes: E * 4, outputBytes: E * 4 });
      expect(dispatch).toMatchObject({ group: 'ep', groupSize: 2, dtype: 'bf16', inputBytes: T * K * D * 2 });
      expect(dispatch.outputBytes).toBe(R * D * 2);
      expect(combine).toMatchObject({ inputBytes: R * D * 2, outputBytes: T * K * D * 2 });
      expect(dispatch.groupStride).toBeUndefined(); // ep is innermost: consecutive ranks
      // the busiest rank's grouped GEMMs grow with it
      expect(sumFlops(layerNodes(build(imbalance), 'forward'), ['matmul', 'grouped_mm'])).toBe(handMatmulFlops(R));
    }
  });

  it('caps the imbalance at ep: the busiest rank receives at most every routed token of its group', () => {
    const dispatch = (g: StepGraph) => g.nodes.find((n) => n.name === 'layers.1.moe.dispatch.all_to_all')!.collective!;
    expect(dispatch(build(4)).outputBytes).toBe(2 * T * K * D * 2);
    expect(dispatch(build(4))).toEqual(dispatch(build(2)));
  });

  it('mirrors the two token all-to-alls in the backward', () => {
    const names = layerNodes(build(), 'backward')
      .filter((n) => n.kind === 'all_to_all')
      .map((n) => n.name);
    expect(names).toEqual(['layers.1.moe.combine.all_to_all.bwd', 'layers.1.moe.dispatch.all_to_all.bwd']);
  });

  it('gathers and reduce-scatters expert weights on efsdp (4 ranks, stride 2), dense weights on dp (8)', () => {
    const g = build();
    const w1 = 'layers.1.moe.routed_experts.inner_experts.w1_EFD';
    const expertBytes = (E / 2) * F * D; // elements of this ep rank's 32 experts
    const ag = g.nodes.find((n) => n.name === `${w1}.all_gather`)!.collective!;
    expect(ag).toMatchObject({ group: 'efsdp', groupSize: 4, groupStride: 2 });
    expect(ag.inputBytes).toBe((expertBytes / 4) * 2); // bf16 shard of 8 experts
    expect(ag.outputBytes).toBe(expertBytes * 2);
    const rs = g.nodes.find((n) => n.name === `${w1}.reduce_scatter`)!.collective!;
    expect(rs).toMatchObject({ group: 'efsdp', groupSize: 4, inputBytes: expertBytes * 4 }); // fp32 reduce
    expect(g.tensors[`${w1}.shard`].bytes).toBe((expertBytes / 4) * 4); // fp32 master shard
    const wq = g.nodes.find((n) => n.name === 'layers.1.attention.wq.weight.all_gather')!.collective!;
    expect(wq).toMatchObject({ group: 'dp', groupSize: 8 });
    const gate = g.params.find((p) => p.name === 'layers.1.moe.router.gate.weight')!;
    expect(gate.shardRows).toBe(E / 8);
  });

  it('without expert parallel has no all-to-all and shards the experts with the dense weights', () => {
    const g = build(1, 1);
    expect(g.nodes.some((n) => n.kind === 'all_to_all')).toBe(false);
    const ag = g.nodes.find((n) => n.name === 'layers.1.moe.routed_experts.inner_experts.w2_EDF.all_gather')!;
    expect(ag.collective).toMatchObject({ group: 'dp', groupSize: 8, outputBytes: E * D * F * 2 });
    expect(sumFlops(layerNodes(g, 'forward'), ['matmul', 'grouped_mm'])).toBe(handMatmulFlops(T * K));
  });

  it('under full AC recomputes the block in the backward: forward FLOPs again, all-to-alls included', () => {
    const g = buildStepGraph({
      model: 'dsv3-16b',
      worldSize: 8,
      batch: B,
      seqLen: S,
      mesh,
      activationCheckpointing: 'full',
    });
    verifyGraph(g);
    const bwd = layerNodes(g, 'backward');
    const recomputed = bwd.filter((n) => n.attrs?.recompute === true);
    expect(sumFlops(recomputed, ['matmul', 'grouped_mm'])).toBe(handMatmulFlops(T * K));
    expect(sumFlops(bwd, ['matmul', 'grouped_mm'])).toBe(3 * handMatmulFlops(T * K));
    expect(bwd.filter((n) => n.kind === 'all_to_all')).toHaveLength(3 + 2); // the forward's three, then two
    // each of the block's 14 weights is gathered once for the backward, read by recompute and gradients
    expect(bwd.filter((n) => n.kind === 'all_gather')).toHaveLength(14);
    expect(recomputed.some((n) => n.kind === 'all_gather')).toBe(false);
  });

  it('marks the ops on the rows an all-to-all received as data-dependent in shape, only under EP', () => {
    const dynamic = (g: StepGraph) => g.nodes.filter((n) => n.layer === 1 && n.attrs?.dynamicShape === true);
    const names = dynamic(build()).map((n) => n.name.replace('layers.1.moe.', ''));
    expect(names).toEqual(['dispatch.sort', 'combine.unsort', 'combine.unsort.bwd', 'dispatch.sort.bwd']);
    expect(dynamic(build(1, 1))).toEqual([]);
  });

  it('keeps the first block dense', () => {
    const ops = layerNodes(build(), 'forward').map((n) => n.name);
    expect(ops.some((n) => n.startsWith('layers.1.moe.'))).toBe(true);
    const first = build()
      .nodes.filter((n) => n.layer === 0)
      .map((n) => n.name);
    expect(first).toContain('layers.0.feed_forward.w1');
    expect(first.some((n) => n.includes('.moe.'))).toBe(false);
  });
});
