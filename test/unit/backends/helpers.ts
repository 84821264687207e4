// Test helpers for the backends: a roofline + α-β cost model defined here (independent of
// src/estimate), a seeded RNG, a hand-made SimpleFSDP-shaped graph generator (for small and
// fuzz graphs) and the schedule invariants every backend must satisfy.

import { expect } from 'vitest';
import { AUTOBUCKETING_DEFAULTS, type Schedule } from '../../../src/backends';
import type { CostModel } from '../../../src/estimate/cost_types';
import { isTopologicalOrder } from '../../../src/graph/toposort';
import { verifyGraph } from '../../../src/graph/verify';
import type { DType, GraphNode, StepGraph, TensorInfo } from '../../../src/graph/types';
export { rng } from '../../helpers/rng';
import { rng } from '../../helpers/rng';

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return (h >>> 0) / 4294967296;
}

export interface RooflineOptions {
  readonly peakFlopsPerUs?: number; // H100 bf16 dense ≈ 989 TFLOP/s = 9.89e8 FLOP/µs
  readonly memBytesPerUs?: number; // HBM3 ≈ 3.35 TB/s
  readonly launchUs?: number;
  readonly alphaUs?: number; // per ring step
  readonly busBytesPerUs?: number; // per-rank link bandwidth (IB 400 Gb/s ≈ 5e4 B/µs)
  /** Relative per-node noise (a rank's measurement error), seeded by `rank`. */
  readonly jitter?: number;
  readonly rank?: number;
}

/** Roofline compute + α-β ring collectives: T = (n−1)·α + ((n−1)/n)·S/β. */
export function rooflineCost(o: RooflineOptions = {}): CostModel {
  const peak = o.peakFlopsPerUs ?? 9.89e8;
  const bw = o.memBytesPerUs ?? 3.35e6;
  const launch = o.launchUs ?? 4;
  const alpha = o.alphaUs ?? 10;
  const beta = o.busBytesPerUs ?? 5e4;
  const jitter = o.jitter ?? 0;
  const rank = o.rank ?? 0;
  const noise = (key: string) => (jitter === 0 ? 1 : 1 + jitter * (2 * hash(`${rank}:${key}`) - 1));
  return {
    label: `test roofline${jitter ? ` ±${jitter} rank ${rank}` : ''}`,
    computeUs(node: GraphNode) {
      if (node.kind === 'view' || node.kind === 'wait' || node.kind === 'all_gather' || node.kind === 'reduce_scatter')
        return 0;
      return (Math.max(node.flops / peak, node.bytesMoved / bw) + launch) * noise(node.name);
    },
    collectiveUs(_kind, bytes, groupSize) {
      const n = Math.max(1, groupSize);
      return ((n - 1) * alpha + ((n - 1) / n) * (bytes / beta)) * noise(`${_kind}:${bytes}`);
    },
  };
}

export interface HandGraphOptions {
  readonly layers: number;
  readonly paramsPerLayer: number | readonly number[];
  readonly worldSize?: number;
  readonly seed?: number;
  /** Scale of random tensor sizes (rows); default 256. */
  readonly rows?: number;
  /** Use two process groups (params alternate). */
  readonly twoGroups?: boolean;
  /** Fraction of non-matmul compute nodes between matmuls. */
  readonly elementwise?: boolean;
}

/**
 * A SimpleFSDP-shaped graph: per parameter cast → all_gather → wait → matmul in forward, the
 * re-gather and two matmuls (dX, dW) in backward, then cast → reduce_scatter → wait → adamw.
 */
export function handGraph(o: HandGraphOptions): StepGraph {
  const r = rng(o.seed ?? 1);
  const n = o.worldSize ?? 8;
  const rowsScale = o.rows ?? 256;
  const tensors: Record<string, TensorInfo> = {};
  const nodes: GraphNode[] = [];
  const t = (id: string, rows: number, cols: number, dtype: DType, extra: Partial<TensorInfo> = {}): string => {
    const bpe = dtype === 'fp32' ? 4 : 2;
    tensors[id] = { id, shape: [rows, cols], dtype, bytes: rows * cols * bpe, ...extra };
    return id;
  };
  const node = (x: Omit<GraphNode, 'id' | 'flops' | 'bytesMoved' | 'matmulLike'> & Partial<GraphNode>) => {
    nodes.push({ flops: 0, bytesMoved: 0, matmulLike: false, ...x, id: nodes.length } as GraphNode);
  };
  const T = 64;
  const D = 32;
  let act = t('x0', T, D, 'bf16', { persistent: true });
  const params: { name: string; rows: number; layer: number; group: string }[] = [];
  const per = (l: number) =>
    typeof o.paramsPerLayer === 'number' ? o.paramsPerLayer : o.paramsPerLayer[l % o.paramsPerLayer.length];
  for (let l = 0; l < o.layers; l++) {
    for (let p = 0; p < per(l); p++) {
      const rows = n * (1 + Math.floor(r() * (rowsScale / n)));
      params.push({
        name: `layers.${l}.p${p}.weight`,
        rows,
        layer: l,
        group: o.twoGroups && p % 2 === 1 ? 'tp' : 'dp',
      });
    }
  }
  const gather = (p: (typeof params)[number], tag: string, phase: 'forward' | 'backward') => {
    const shard = `${p.name}.shard`;
    if (!tensors[shard]) t(shard, p.rows / n, D, 'fp32', { persistent: true });
    const cast = t(`${p.name}.${tag}cast`, p.rows / n, D, 'bf16');
    node({
      name: `${p.name}.${tag}cast`,
      kind: 'cast',
      op: 'cast',
      inputs: [shard],
      outputs: [cast],
      phase,
      layer: p.layer,
      params: [p.name],
      bytesMoved: tensors[shard].bytes + tensors[cast].bytes,
    });
    const ag = t(`${p.name}.${tag}all_gather`, p.rows, D, 'bf16');
    node({
      name: `${p.name}.${tag}all_gather`,
      kind: 'all_gather',
      op: 'all_gather_into_tensor',
      inputs: [cast],
      outputs: [ag],
      phase,
      layer: p.layer,
      params: [p.name],
      collective: {
        kind: 'all_gather',
        group: p.group,
        groupSize: n,
        dtype: 'bf16',
        inputBytes: tensors[cast].bytes,
        outputBytes: tensors[ag].bytes,
      },
    });
    const full = t(`${p.name}.${tag}full`, p.rows, D, 'bf16', { aliasOf: ag });
    node({
      name: `${p.name}.${tag}wait`,
      kind: 'wait',
      op: 'wait_tensor',
      inputs: [ag],
      outputs: [full],
      phase,
      layer: p.layer,
      params: [p.name],
      waitOf: `${p.name}.${tag}all_gather`,
    });
    return full;
  };
  const saved: string[] = [];
  for (const p of params) {
    const full = gather(p, '', 'forward');
    const out = t(`${p.name}.fwd.out`, T, D, 'bf16');
    node({
      name: `${p.name}.fwd.mm`,
      kind: 'compute',
      op: 'matmul',
      inputs: [act, full],
      outputs: [out],
      phase: 'forward',
      layer: p.layer,
      matmulLike: true,
      flops: 2 * T * D * p.rows * 64,
      bytesMoved: tensors[full].bytes,
    });
    saved.push(act);
    act = out;
    if (o.elementwise && r() < 0.5) {
      const e = t(`${p.name}.fwd.act`, T, D, 'bf16');
      node({
        name: `${p.name}.fwd.act`,
        kind: 'compute',
        op: 'add',
        inputs: [act],
        outputs: [e],
        phase: 'forward',
        layer: p.layer,
        bytesMoved: 2 * tensors[act].bytes,
      });
      act = e;
    }
  }
  let grad = t('dloss', T, D, 'bf16');
  node({
    name: 'loss.bwd',
    kind: 'compute',
    op: 'cross_entropy_bwd',
    inputs: [act],
    outputs: [grad],
    phase: 'backward',
    bytesMoved: 2 * tensors[act].bytes,
  });
  const rsList: { p: (typeof params)[number]; g: string }[] = [];
  for (let k = params.length - 1; k >= 0; k--) {
    const p = params[k];
    const full = gather(p, 'bwd.', 'backward');
    const dx = t(`${p.name}.bwd.dx`, T, D, 'bf16');
    node({
      name: `${p.name}.bwd.dx`,
      kind: 'compute',
      op: 'matmul',
      inputs: [grad, full],
      outputs: [dx],
      phase: 'backward',
      layer: p.layer,
      matmulLike: true,
      flops: 2 * T * D * p.rows * 64,
      bytesMoved: tensors[full].bytes,
    });
    const dw = t(`${p.name}.grad`, p.rows, D, 'bf16');
    node({
      name: `${p.name}.bwd.dw`,
      kind: 'compute',
      op: 'matmul',
      inputs: [grad, saved[k]],
      outputs: [dw],
      phase: 'backward',
      layer: p.layer,
      matmulLike: true,
      flops: 2 * T * D * p.rows * 64,
      bytesMoved: tensors[dw].bytes,
    });
    grad = dx;
    const gc = t(`${p.name}.grad.cast`, p.rows, D, 'fp32');
    node({
      name: `${p.name}.grad.cast`,
      kind: 'cast',
      op: 'cast',
      inputs: [dw],
      outputs: [gc],
      phase: 'backward',
      layer: p.layer,
      params: [p.name],
      bytesMoved: tensors[dw].bytes + tensors[gc].bytes,
    });
    const rs = t(`${p.name}.reduce_scatter`, p.rows / n, D, 'fp32');
    node({
      name: `${p.name}.reduce_scatter`,
      kind: 'reduce_scatter',
      op: 'reduce_scatter_tensor',
      inputs: [gc],
      outputs: [rs],
      phase: 'backward',
      layer: p.layer,
      params: [p.name],
      collective: {
        kind: 'reduce_scatter',
        group: p.group,
        groupSize: n,
        dtype: 'fp32',
        reduceOp: 'avg',
        inputBytes: tensors[gc].bytes,
        outputBytes: tensors[rs].bytes,
      },
    });
    const gs = t(`${p.name}.grad.shard`, p.rows / n, D, 'fp32', { aliasOf: rs });
    node({
      name: `${p.name}.rs.wait`,
      kind: 'wait',
      op: 'wait_tensor',
      inputs: [rs],
      outputs: [gs],
      phase: 'backward',
      layer: p.layer,
      params: [p.name],
      waitOf: `${p.name}.reduce_scatter`,
    });
    rsList.push({ p, g: gs });
  }
  for (const { p, g } of rsList) {
    const next = t(`${p.name}.shard.next`, p.rows / n, D, 'fp32');
    node({
      name: `${p.name}.adamw`,
      kind: 'compute',
      op: 'adamw',
      inputs: [`${p.name}.shard`, g],
      outputs: [next],
      phase: 'optimizer',
      layer: p.layer,
      params: [p.name],
      bytesMoved: 4 * tensors[next].bytes,
    });
  }
  return {
    nodes,
    tensors,
    params: [],
    meta: { model: 'hand', worldSize: n, paramDtype: 'bf16', reduceDtype: 'fp32', batch: 1, seqLen: T },
  };
}

const isColl = (n: GraphNode) => n.kind === 'all_gather' || n.kind === 'reduce_scatter' || n.kind === 'all_reduce';

/** The invariants every backend's schedule must satisfy; returns the positions by name. */
export function expectValidSchedule(
  original: StepGraph,
  s: Schedule,
  o: { byteCapBytes?: number } = {},
): Map<string, number> {
  const g = s.graph;
  verifyGraph(g);
  expect(
    isTopologicalOrder(
      g,
      g.nodes.map((_, i) => i),
    ),
  ).toBe(true);
  const pos = new Map(g.nodes.map((n, i) => [n.name, i]));
  // every wait after its collective
  for (const [i, n] of g.nodes.entries()) if (n.kind === 'wait') expect(pos.get(n.waitOf!)!).toBeLessThan(i);
  // every original collective in exactly one node (itself or a bucket member)
  const seen = new Map<string, number>();
  for (const n of g.nodes) {
    if (!isColl(n)) continue;
    for (const m of n.collective!.members ?? [n.name]) seen.set(m, (seen.get(m) ?? 0) + 1);
  }
  const origColls = original.nodes.filter(isColl);
  expect(seen.size).toBe(origColls.length);
  for (const c of origColls) expect(seen.get(c.name)).toBe(1);
  // every other original node survives unchanged (same tensors in and out)
  const origByName = new Map(original.nodes.map((n) => [n.name, n]));
  for (const n of g.nodes) {
    if (n.collective?.members || (n.kind === 'wait' && g.nodes[pos.get(n.waitOf!)!].collective?.members)) continue;
    const o0 = origByName.get(n.name)!;
    expect(o0).toBeDefined();
    expect(n.inputs).toEqual(o0.inputs);
    expect(n.outputs).toEqual(o0.outputs);
  }
  expect(g.nodes.length).toBe(original.nodes.length - 2 * s.buckets.reduce((a, b) => a + b.members.length - 1, 0));
  // pre-buckets (torch 2.13): one key each, within their own cap, each inside one output bucket
  const pre = preBucketsOf(original, s);
  const unitOf = new Map<string, PreBucket>(pre.flatMap((p) => p.members.map((m) => [m, p] as const)));
  const outBucketOf = new Map(s.buckets.flatMap((b) => b.members.map((m) => [m, b.node] as const)));
  for (const p of pre) {
    const members = p.members.map((m) => origByName.get(m)!);
    expect(members.every((m) => m !== undefined && isColl(m))).toBe(true);
    expect(new Set(members.map(keyOf)).size).toBe(1);
    // greedy_bucket_collective_by_mb: a collective counts max(input, output) bytes against the cap
    const bytes = members.reduce((a, m) => a + Math.max(m.collective!.inputBytes, m.collective!.outputBytes), 0);
    expect(bytes).toBeLessThanOrEqual(p.capBytes);
    expect(new Set(p.members.map((m) => outBucketOf.get(m))).size).toBe(1);
  }
  // buckets: same key, within the cap, recorded consistently
  for (const b of s.buckets) {
    const node = g.nodes[pos.get(b.node)!];
    expect(node.collective!.members).toEqual(b.members);
    const members = b.members.map((m) => origByName.get(m)!);
    expect(new Set(members.map(keyOf)).size).toBe(1);
    // the bucketer's cap binds what the bucketer merged: two or more units (a pre-bucket or one
    // collective); a lone pre-bucket is held to the pre-bucket cap above
    const units = new Set(b.members.map((m) => unitOf.get(m) ?? m));
    if (o.byteCapBytes !== undefined && units.size > 1) {
      const what = `${b.node}: ${units.size} units of ${b.members.length} collectives`;
      expect(
        members.reduce((a, m) => a + m.collective!.inputBytes + m.collective!.outputBytes, 0),
        what,
      ).toBeLessThanOrEqual(o.byteCapBytes);
    }
  }
  return pos;
}

const keyOf = (m: GraphNode): string => {
  const c = m.collective!;
  return c.kind === 'all_gather' ? `${c.kind}|${c.group}|${c.dtype}` : `${c.kind}|${c.group}|${c.reduceOp}|${c.dtype}`;
};

interface PreBucket {
  readonly members: readonly string[];
  readonly capBytes: number;
}

/**
 * torch 2.13's pre-buckets as the schedule reports them (passStats, FX names), on the original
 * graph's names (an imported backward's `.bw` names resolve within their phase), with the cap in
 * bytes as greedy_bucket_collective_by_mb takes it: int(cap_mb * 1024 * 1024).
 */
function preBucketsOf(original: StepGraph, s: Schedule): PreBucket[] {
  const out: PreBucket[] = [];
  for (const ps of s.passStats ?? []) {
    const pb = ps.preBucketing;
    if (pb === undefined) continue;
    const inPhase = new Map<string, string>();
    const anywhere = new Map<string, string>();
    for (const n of original.nodes) {
      if (!isColl(n)) continue;
      const fx = n.name.replace(/(\.bw)+$/, '');
      if (n.phase === ps.phase && !inPhase.has(fx)) inPhase.set(fx, n.name);
      if (!anywhere.has(fx)) anywhere.set(fx, n.name);
    }
    const capBytes = Math.floor(pb.capMb * 1024 * 1024);
    for (const b of pb.buckets) out.push({ members: b.map((m) => inPhase.get(m) ?? anywhere.get(m) ?? m), capBytes });
  }
  return out;
}

export const DEFAULT_CAP_BYTES = Math.floor(AUTOBUCKETING_DEFAULTS.max_bucket_memory_gb * 1024 ** 3);
