// The step graph as torch's overlap pass sees an FX graph: placeholders first (one per graph
// input), then every node in program order, then the output node; edges are FX's
// `all_input_nodes` / `users`. Decisions in torch depend on placeholders (they sit in the ready
// queues) and on node positions (tie-breaks), so the port plans on this view, not on the IR.
// Upstream: torch/_inductor/fx_passes/overlap_scheduling.py (OverlapScheduler.__init__).

import type { CostModel } from '../../estimate';
import { collectiveCostBytes, type Phase } from '../../graph';
import type { GraphIndex } from '../graph_index';
import { bucketKey } from '../rewrite';
import { weakMemo } from '../../util';
import { isCoalesced } from './coalesced';

export enum NodeClass {
  Placeholder = 0,
  Compute = 1, // torch is_compute_node: a flop-registered op (mm, addmm, bmm, attention fwd / bwd)
  Other = 2, // every other call_function (memory-bound ops, views, getitem)
  Collective = 3, // a collective start that a wait completes
  Wait = 4,
  Output = 5,
}

export interface TorchGraph {
  readonly ix: GraphIndex;
  readonly n: number;
  readonly name: readonly string[];
  readonly cls: Uint8Array;
  /** Torch node → graph-index node (-1 for placeholders and the output). */
  readonly irOf: Int32Array;
  /** Graph-index node → torch node. */
  readonly torchOf: Int32Array;
  /** Placeholder torch node → the tensor id it stands for. */
  readonly placeholderTensor: ReadonlyMap<number, string>;
  /** CSR: distinct input nodes (FX all_input_nodes). */
  readonly parOff: Int32Array;
  readonly parIdx: Int32Array;
  /** CSR: users, in the order FX records them (program order). */
  readonly useOff: Int32Array;
  readonly useIdx: Int32Array;
  /** Runtime estimate, µs; NaN where torch has none. */
  readonly estUs: Float64Array;
  /** Collective start → its wait (a coalesced one's first) and wait → its start; -1 elsewhere. */
  readonly waitOf: Int32Array;
  readonly startOf: Int32Array;
  /** Collective starts in the order torch registers them (by wait position). */
  readonly collectives: Int32Array;
  /** Per collective start: memory footprint (input + output bytes), latency estimate (size 0, µs), group, keys. */
  readonly sizeBytes: Float64Array;
  readonly latencyUs: Float64Array;
  readonly group: readonly string[];
  /** torch bucket_key (group, dtype[, op]) and get_full_bucket_key (collective type + bucket_key); '' for None. */
  readonly bucketKey: readonly string[];
  readonly fullKey: readonly string[];
  /** torch is_cheap_fn: a view or a pointwise op (a unary chain of them may lead to a collective). */
  readonly cheap: Uint8Array;
}

/** aten ops torch tags pointwise among those the step graphs hold (is_cheap_fn) — views are cheap too. */
const POINTWISE = new Set([
  'add',
  'sub',
  'mul',
  'div',
  'neg',
  'silu',
  'gelu',
  'relu',
  'sigmoid',
  'tanh',
  'exp',
  'log',
  'pow',
  'rsqrt',
  'sqrt',
  'reciprocal',
  'where',
  'clamp',
  'abs',
  'silu_backward',
  'gelu_backward',
  'threshold_backward',
  'sigmoid_backward',
  'tanh_backward',
  'fill',
  'copy',
  'maximum',
  'minimum',
  'eq',
  'ne',
  'lt',
  'gt',
  'le',
  'ge',
  'logical_not',
  'bitwise_and',
  'convert_element_type',
  'lerp',
  'addcmul',
  'addcdiv',
  'sign',
  'sin',
  'cos',
  'erf',
]);

// a graph has a few dozen distinct ops and tens of thousands of nodes: each op is parsed once
const OP_NAMES = new Map<string, string>();

function opName(target: string): string {
  let name = OP_NAMES.get(target);
  if (name === undefined) {
    const m = /^(?:[A-Za-z_]\w*\.)?([A-Za-z_]\w*?)(?:_)?(?:\.[\w]+)?$/.exec(target);
    name = m ? m[1] : target;
    if (OP_NAMES.size < 4096) OP_NAMES.set(target, name);
  }
  return name;
}

/** One graph torch's pass runs on: an imported FX graph, or one phase of a built step. */
export interface PassRegion {
  readonly phase: string;
  readonly nodes: readonly number[]; // graph-index nodes, in order
  readonly placeholders: readonly string[]; // tensor ids, FX order
  readonly outputs: readonly string[]; // tensor ids the output node reads
}

/**
 * The graphs torch would pass separately: each imported FX graph, or each phase of a built step
 * (SimpleFSDP compiles the forward and the backward as two graphs).
 */
export function passRegions(ix: GraphIndex): readonly PassRegion[] {
  return REGIONS(ix);
}

const STEP_PHASES: readonly Phase[] = ['forward', 'backward', 'optimizer'];
const REGIONS = weakMemo((ix: GraphIndex) => ix, computeRegions);
// a region belongs to one index (passRegions): the region alone keys its structure
const STRUCTURES = weakMemo((_ix: GraphIndex, region: PassRegion) => region, buildStructure);

function computeRegions(ix: GraphIndex): PassRegion[] {
  const byPhase = new Map<string, number[]>();
  ix.nodes.forEach((node, i) => {
    const list = byPhase.get(node.phase);
    if (list) list.push(i);
    else byPhase.set(node.phase, [i]);
  });
  const fx = ix.graph.fxGraphs;
  if (fx === undefined && ix.graph.meta.jointGraph) return jointRegions(ix);
  // a built step's graphs run forward, backward, optimizer, whatever order its nodes are listed in
  const phases = fx !== undefined ? fx.map((b) => b.phase) : STEP_PHASES.filter((ph) => byPhase.has(ph));
  const regionOf = new Int32Array(ix.n).fill(-1);
  phases.forEach((ph, r) => byPhase.get(ph)?.forEach((i) => (regionOf[i] = r)));
  if (!regionsInOrder(ix, regionOf)) {
    // phases that feed each other both ways (or nodes of no listed graph) are one graph
    return splitRegions(ix, new Int32Array(ix.n), ['step']);
  }
  if (fx !== undefined) {
    return fx.map((b) => ({
      phase: b.phase,
      nodes: byPhase.get(b.phase) ?? [],
      placeholders: b.placeholders,
      outputs: b.outputs,
    }));
  }
  return splitRegions(ix, regionOf, phases);
}

/** graph_trainer's aot_fx_trace: forward and backward are one graph; the optimizer runs outside it. */
function jointRegions(ix: GraphIndex): PassRegion[] {
  const regionOf = Int32Array.from(ix.nodes, (node) => (node.phase === 'optimizer' ? 1 : 0));
  const optimizer = regionOf.includes(1);
  return splitRegions(ix, regionOf, optimizer ? ['forward+backward', 'optimizer'] : ['forward+backward']);
}

/** Is every edge inside a region or from an earlier region to a later one? */
function regionsInOrder(ix: GraphIndex, regionOf: Int32Array): boolean {
  for (let i = 0; i < ix.n; i++) {
    if (regionOf[i] < 0) return false;
    for (let k = ix.predOff[i]; k < ix.predOff[i + 1]; k++) if (regionOf[ix.predIdx[k]] > regionOf[i]) return false;
  }
  return true;
}

/** Regions of a built graph: their inputs are what they read from outside, their outputs what leaves them. */
function splitRegions(ix: GraphIndex, regionOf: Int32Array, phases: readonly string[]): PassRegion[] {
  const byPhase = new Map<string, number[]>(phases.map((ph) => [ph, []]));
  for (let i = 0; i < ix.n; i++) byPhase.get(phases[regionOf[i]])!.push(i);
  const readOutside = phases.map(() => new Set<string>());
  const inputs = phases.map(() => new Set<string>());
  // which tensors some node reads: a flag per single-output node, a set for the other tensors
  const outputRead = new Uint8Array(ix.n);
  const readOther = new Set<string>();
  ix.nodes.forEach((node, i) => {
    for (let k = 0; k < node.inputs.length; k++) {
      const t = node.inputs[k];
      const p = ix.inputSrc[ix.inputOff[i] + k];
      if (p >= 0 && ix.nodes[p].outputs.length === 1) outputRead[p] = 1;
      else readOther.add(t);
      if (p < 0 || regionOf[p] !== regionOf[i]) {
        inputs[regionOf[i]].add(t);
        if (p >= 0) readOutside[regionOf[p]].add(t);
      }
    }
  });
  const read = (i: number, t: string) => (ix.nodes[i].outputs.length === 1 ? outputRead[i] === 1 : readOther.has(t));
  return phases.map((phase, r) => {
    const nodes = byPhase.get(phase)!;
    const outputs: string[] = [];
    for (const i of nodes) {
      if (ix.collOfWait[i] >= 0 || ix.waitOfColl[i] >= 0) continue;
      for (const t of ix.nodes[i].outputs) if (readOutside[r].has(t) || !read(i, t)) outputs.push(t);
    }
    return { phase, nodes, placeholders: [...inputs[r]], outputs };
  });
}

/**
 * The FX-shaped view of one region of an indexed step graph: its structure is built once per
 * region (graphs are immutable), the runtimes per cost model.
 */
export function buildTorchGraph(ix: GraphIndex, cost: CostModel, region: PassRegion): TorchGraph {
  const structure = STRUCTURES(ix, region);
  const { n, cls, irOf } = structure;
  const estUs = new Float64Array(n).fill(NaN);
  const latencyUs = new Float64Array(n);
  for (let t = 0; t < n; t++) {
    if (irOf[t] < 0) continue;
    const node = ix.nodes[irOf[t]];
    if (cls[t] === NodeClass.Wait) estUs[t] = 0;
    else if (cls[t] === NodeClass.Collective) {
      const c = node.collective!;
      const bytes = collectiveCostBytes(c);
      estUs[t] = finiteOr0(
        node.estMs !== undefined
          ? node.estMs * 1000
          : cost.collectiveUs(c.kind, bytes, c.groupSize, c.dtype, c.groupStride),
      );
      latencyUs[t] = finiteOr0(
        node.estMsSize0 !== undefined
          ? node.estMsSize0 * 1000
          : cost.collectiveUs(c.kind, 0, c.groupSize, c.dtype, c.groupStride),
      );
    } else estUs[t] = node.kind === 'view' ? 0 : finiteOr0(cost.computeUs(node));
  }
  return { ...structure, estUs, latencyUs };
}

function buildStructure(ix: GraphIndex, region: PassRegion): Omit<TorchGraph, 'estUs' | 'latencyUs'> {
  const nodes = fxNodes(ix, region);
  const parents = allInputNodes(ix, region, nodes.torchOf, nodes.n);
  return {
    ix,
    ...nodes,
    ...inputsAndUsers(parents),
    ...identifyCollectives(ix, region, nodes),
  };
}

type FxNodes = Pick<TorchGraph, 'n' | 'name' | 'cls' | 'irOf' | 'torchOf' | 'placeholderTensor'>;

/** FX's graph.nodes: a placeholder per region input, the region's nodes in program order, the output. */
function fxNodes(ix: GraphIndex, region: PassRegion): FxNodes {
  const P = region.placeholders.length;
  const n = P + region.nodes.length + 1;
  const out = n - 1;
  const name: string[] = new Array(n);
  const cls = new Uint8Array(n);
  const irOf = new Int32Array(n).fill(-1);
  const torchOf = new Int32Array(ix.n).fill(-1);
  const placeholderTensor = new Map<number, string>();
  region.placeholders.forEach((t, k) => {
    name[k] = t;
    cls[k] = NodeClass.Placeholder;
    placeholderTensor.set(k, t);
  });
  region.nodes.forEach((i, k) => {
    const t = P + k;
    irOf[t] = i;
    torchOf[i] = t;
    name[t] = ix.nodes[i].name;
    cls[t] =
      ix.waitOfColl[i] >= 0
        ? NodeClass.Collective
        : ix.collOfWait[i] >= 0
          ? NodeClass.Wait
          : ix.isCompute[i]
            ? NodeClass.Compute
            : NodeClass.Other;
  });
  name[out] = 'output';
  cls[out] = NodeClass.Output;
  return { n, name, cls, irOf, torchOf, placeholderTensor };
}

/** FX's node.all_input_nodes: per torch node, its distinct inputs (the producer in the region, else a placeholder). */
function allInputNodes(ix: GraphIndex, region: PassRegion, torchOf: Int32Array, n: number): number[][] {
  const { nodes } = ix;
  const producer = ix.producerOf;
  const P = region.placeholders.length;
  const R = region.nodes.length;
  const phOf = new Map<string, number>();
  region.placeholders.forEach((t, k) => phOf.set(t, k));
  // p: the tensor's writer in the index (-1 none); its torch node, else the placeholder standing for it
  const torchNodeOf = (tid: string, p: number): number | undefined =>
    p >= 0 && torchOf[p] >= 0 ? torchOf[p] : phOf.get(tid);
  const parents: number[][] = new Array(n);
  for (let k = 0; k < P; k++) parents[k] = [];
  for (let k = 0; k < R; k++) {
    const i = region.nodes[k];
    const ps: number[] = [];
    const ins = nodes[i].inputs;
    for (let j = 0; j < ins.length; j++) {
      const t = torchNodeOf(ins[j], ix.inputSrc[ix.inputOff[i] + j]);
      if (t !== undefined && !ps.includes(t)) ps.push(t);
    }
    const c = ix.collOfWait[i];
    // a coalesced collective's waits read it only through their getitems (FX all_input_nodes)
    if (c >= 0 && !ps.includes(torchOf[c]) && !isCoalesced(nodes[c])) ps.push(torchOf[c]);
    parents[P + k] = ps;
  }
  const outs: number[] = [];
  for (const tid of region.outputs) {
    const t = torchNodeOf(tid, producer.get(tid) ?? -1);
    if (t !== undefined && !outs.includes(t)) outs.push(t);
  }
  parents[n - 1] = outs;
  return parents;
}

/** all_input_nodes and FX's node.users (in program order) as CSR lists. */
function inputsAndUsers(parents: readonly number[][]): Pick<TorchGraph, 'parOff' | 'parIdx' | 'useOff' | 'useIdx'> {
  const n = parents.length;
  const parOff = new Int32Array(n + 1);
  for (let t = 0; t < n; t++) parOff[t + 1] = parOff[t] + parents[t].length;
  const parIdx = new Int32Array(parOff[n]);
  const useCount = new Int32Array(n + 1);
  for (let t = 0; t < n; t++) {
    parIdx.set(parents[t], parOff[t]);
    for (const p of parents[t]) useCount[p + 1]++;
  }
  const useOff = new Int32Array(n + 1);
  for (let t = 0; t < n; t++) useOff[t + 1] = useOff[t] + useCount[t + 1];
  const fill = useOff.slice(0, n);
  const useIdx = new Int32Array(useOff[n]);
  for (let t = 0; t < n; t++) for (const p of parents[t]) useIdx[fill[p]++] = t;
  return { parOff, parIdx, useOff, useIdx };
}

type CollectiveFields =
  | 'waitOf'
  | 'startOf'
  | 'collectives'
  | 'sizeBytes'
  | 'group'
  | 'bucketKey'
  | 'fullKey'
  | 'cheap';

/**
 * torch's _identify_collectives: each collective start with its wait (registered at the wait, in
 * program order), its footprint, group and bucket keys; and is_cheap_fn for every other node.
 */
function identifyCollectives(ix: GraphIndex, region: PassRegion, fx: FxNodes): Pick<TorchGraph, CollectiveFields> {
  const { n, cls, torchOf } = fx;
  const P = region.placeholders.length;
  const waitOf = new Int32Array(n).fill(-1);
  const startOf = new Int32Array(n).fill(-1);
  const sizeBytes = new Float64Array(n);
  const group: string[] = new Array(n).fill('');
  const bKey: string[] = new Array(n).fill('');
  const fullKey: string[] = new Array(n).fill('');
  const cheap = new Uint8Array(n);
  const collectives: number[] = [];
  for (let k = 0; k < region.nodes.length; k++) {
    const t = P + k;
    const i = region.nodes[k];
    const node = ix.nodes[i];
    if (cls[t] === NodeClass.Wait) {
      const start = torchOf[ix.collOfWait[i]];
      startOf[t] = start;
      // torch registers a coalesced collective at its first wait, which stands for the others
      if (waitOf[start] >= 0) continue;
      waitOf[start] = t;
      collectives.push(start);
      continue;
    }
    if (cls[t] === NodeClass.Collective) {
      const c = node.collective!;
      sizeBytes[t] = node.sizeBytes ?? c.inputBytes + c.outputBytes;
      group[t] = c.group;
      // torch's get_collective_type and bucket_key know no coalesced op and no all_to_all_single
      // (fx_passes/bucketing.py): ('', None), the key it shares with no bucket. The scheduler still
      // schedules an all-to-all: _schedulable_wait_node recognises its kernel (NCCL_COLL.ALL_TO_ALL).
      const unbucketed = isCoalesced(node) || c.kind === 'all_to_all';
      bKey[t] = unbucketed ? '' : bucketKey(node);
      fullKey[t] = unbucketed ? '' : `${c.kind}|${bKey[t]}`;
      continue;
    }
    cheap[t] = node.kind === 'view' || POINTWISE.has(opName(String(node.op))) ? 1 : 0;
  }
  const collectiveInts = Int32Array.from(collectives);
  return { waitOf, startOf, collectives: collectiveInts, sizeBytes, group, bucketKey: bKey, fullKey, cheap };
}

const finiteOr0 = (x: number): number => (Number.isFinite(x) && x > 0 ? x : 0);
