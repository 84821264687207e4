// torch 2.13's FSDP pre-bucketing (pre_bucket_fsdp_collectives), run before the overlap
// scheduler: in each FX graph that has FSDP all-gathers, adjacent FSDP all-gathers and then
// reduce-scatters are merged into buckets of about the size that saturates the link. Each merge
// is spliced in as torch traces it (bucketing.py all_gather_merge_fn_to_trace /
// reduce_scatter_merge_fn_to_trace: copy-in, one collective, its wait, copy-out), named as FX
// names copied nodes, and the graph re-sorted as torch does, so the scheduler sees torch's graph.
// The result is a planning graph; the backend maps its decisions back onto the original nodes.
// Upstream: torch/_inductor/fx_passes/fsdp.py, bucketing.py, overlap_scheduling.py.

import type { DType, GraphNode, StepGraph, TensorInfo } from '../../graph';
import { DTYPE_BYTES } from '../../graph';
import { nccl213CollectiveMs, type Nccl213Topology } from '../../estimate';
import { LruCache, weakMemo } from '../../util';
import { indexGraph } from '../graph_index';
import {
  type CapKnobs,
  type FxView,
  type ProducerOf,
  type UserTable,
  greedyBuckets,
  readByOutput,
  identifyFsdpGroups,
  isFsdpReduceScatterWait,
  preBucketCapMb,
  usersOf,
} from './fsdp_groups';
import { traceCoalescedReduceScatter } from './coalesced';
import { FxList, NodeIds } from './fx_list';
import { FxNamespace, fxNameOf } from './fx_names';
import type { AutobucketingOptions } from './options';
import { type PassRegion, passRegions } from './torch_graph';

/** One merged collective: the original collectives it carries and the cast nodes torch folded into it. */
export interface PreBucket {
  readonly start: string; // IR name of the merged collective
  readonly wait: string;
  /** Every wait of the merged collective: one, or one per member (bucket_mode 'coalesced'). */
  readonly waits: readonly string[];
  readonly members: readonly string[]; // original collective names, bucket order
  readonly folded: readonly string[]; // original cast nodes erased (their work moves into the copy-in)
}

export interface PreBucketResult {
  readonly graph: StepGraph;
  readonly buckets: readonly PreBucket[];
  /** Nodes the merges created besides the collectives and waits (copy-in / copy-out, views). */
  readonly helpers: ReadonlySet<string>;
  /** Per FX graph: its phase and bucket cap (MB); absent where torch found no FSDP group. */
  readonly caps: readonly { readonly phase: string; readonly capMb: number }[];
  /** What timed the merged collectives: torch 2.13's analytical model, or the cost model. */
  readonly estimator: 'torch-2.13-analytical-nccl' | 'cost-model';
}

/** Mutable FX graph of one region: IR nodes in order, a tensor table shared by all regions. */
class Region implements FxView {
  private cached: GraphNode[] | null;
  private made: { list: FxList; ns: FxNamespace; msPerByte: number | undefined } | null = null;
  private numbers: NodeIds | null = null;
  constructor(
    nodes: GraphNode[],
    readonly producer: RegionProducers,
    readonly outputs: ReadonlySet<string>,
    readonly tensors: Record<string, TensorInfo>,
    private readonly namespace: () => FxNamespace,
    readonly irNames: IrNames,
  ) {
    this.cached = nodes;
  }

  /** What only a merge needs (built at the first): the linked list, the FX names, the memory rate. */
  private get work() {
    this.made ??= { list: new FxList(this.nodes, this.ids), ns: this.namespace(), msPerByte: memoryRate(this.nodes) };
    return this.made;
  }

  /** The nodes' numbers (built at the first use; the list and the merges' new nodes share them). */
  get ids(): NodeIds {
    this.numbers ??= new NodeIds(this.nodes);
    return this.numbers;
  }

  get list(): FxList {
    return this.work.list;
  }

  get ns(): FxNamespace {
    return this.work.ns;
  }

  get msPerByte(): number | undefined {
    return this.work.msPerByte;
  }

  get nodes(): GraphNode[] {
    this.cached ??= this.list.toArray();
    return this.cached;
  }

  /** The list changed: `nodes` is rebuilt when next read. */
  touched(): void {
    this.cached = null;
  }
}

/**
 * A region's tensor → its writer: the index's producers that lie in the region, as merges changed
 * them (a Map of every tensor, filled per region, cost more than all its reads).
 */
class RegionProducers implements ProducerOf {
  private readonly changed = new Map<string, GraphNode | null>(); // null: no longer written
  private readonly touched: Uint8Array; // per index node: a tensor it writes is in `changed`
  constructor(
    private readonly ix: ReturnType<typeof indexGraph>,
    private readonly regionOf: Int32Array | null, // null: regions share nodes, every writer is in `changed`
    private readonly region: number,
    nodes: readonly GraphNode[],
  ) {
    this.touched = new Uint8Array(regionOf === null ? 0 : ix.n);
    if (regionOf === null) for (const n of nodes) for (const t of n.outputs) this.changed.set(t, n);
  }

  get(tensor: string): GraphNode | undefined {
    const p = this.ix.producerOf.get(tensor);
    if (this.regionOf !== null && p !== undefined && this.touched[p] === 0)
      return this.regionOf[p] === this.region ? this.ix.nodes[p] : undefined;
    const c = this.changed.get(tensor);
    if (c !== undefined || this.regionOf === null || p === undefined) return c ?? undefined;
    return this.regionOf[p] === this.region ? this.ix.nodes[p] : undefined;
  }

  /** A node of the index (its id its index) reads its input's writer off the index, while that is unchanged. */
  inputOf(n: GraphNode, k: number): GraphNode | undefined {
    const ix = this.ix;
    if (this.regionOf !== null && ix.nodes[n.id] === n) {
      const p = ix.inputSrc[ix.inputOff[n.id] + k];
      if (p >= 0 && this.touched[p] === 0) return this.regionOf[p] === this.region ? ix.nodes[p] : undefined;
    }
    return this.get(n.inputs[k]);
  }

  set(tensor: string, node: GraphNode | null): void {
    const p = this.ix.producerOf.get(tensor);
    if (p !== undefined && this.touched.length > 0) this.touched[p] = 1;
    this.changed.set(tensor, node);
  }

  delete(tensor: string): void {
    this.set(tensor, null);
  }
}

/**
 * usersOf of a region before any merge, for disjoint regions: a node's users read off the index's
 * successors (a wait follows its collective there without reading it), for the few nodes a merge
 * asks about rather than for every node.
 */
class OriginalUsers implements UserTable {
  constructor(
    private readonly ix: ReturnType<typeof indexGraph>,
    private readonly regionOf: Int32Array,
    private readonly region: number,
  ) {}

  of(n: GraphNode): readonly GraphNode[] | undefined {
    const { ix, regionOf, region } = this;
    const i = indexOf(ix, n);
    if (i < 0 || regionOf[i] !== region) return undefined; // new, or elsewhere
    const users: GraphNode[] = [];
    for (let e = ix.succOff[i]; e < ix.succOff[i + 1]; e++) {
      const s = ix.succIdx[e];
      const u = ix.nodes[s];
      if (regionOf[s] === region && u.inputs.some((t) => n.outputs.includes(t))) users.push(u);
    }
    return users;
  }
}

/** The node's place in the index (its id, when the index kept program order), -1: a node a merge made. */
function indexOf(ix: ReturnType<typeof indexGraph>, n: GraphNode): number {
  if (ix.nodes[n.id] === n) return n.id;
  const i = ix.indexOfName.get(n.name);
  return i !== undefined && ix.nodes[i] === n ? i : -1;
}

/** Names taken in the IR (nodes and tensors): a new node's name gets `.bw` until it is free, as the importer does. */
class IrNames {
  private readonly added = new Set<string>();
  constructor(private readonly ix: ReturnType<typeof indexGraph>) {}

  take(fx: string): string {
    const { indexOfName, graph } = this.ix;
    let name = fx;
    while (indexOfName.has(name) || this.added.has(name) || Object.hasOwn(graph.tensors, name)) name = `${name}.bw`;
    this.added.add(name);
    return name;
  }
}

type PreBucketKnobs = CapKnobs & Partial<Pick<AutobucketingOptions, 'bucket_mode'>>;

// per graph (held weakly), per the knobs and topology it reads: the UI and the bench re-run the
// pass on one graph, and the same result object keeps the planning graph's index cached too
const PRE_BUCKETS = weakMemo(
  (graph: StepGraph) => graph,
  () => new LruCache<string, PreBucketResult | null>(8),
);

/** torch's pre-bucketing over every FX graph of `graph`; null when no graph has an FSDP group. */
export function preBucketFsdp(graph: StepGraph, knobs: PreBucketKnobs, topo: Nccl213Topology): PreBucketResult | null {
  const key = JSON.stringify([
    knobs.pre_bucketing_fsdp_collectives_bucket_cap_mb,
    knobs.pre_bucketing_fsdp_collectives_min_bucket_cap_mb,
    knobs.pre_bucketing_fsdp_collectives_max_bucket_cap_mb,
    knobs.pre_bucketing_fsdp_collectives_saturation_calibration_multiplier,
    knobs.bucket_mode ?? null,
    topo.gpuType,
    topo.gpusPerNode,
    topo.nvlink,
    topo.intraNodeBwGBs ?? null,
    topo.interNodeBwGBs ?? null,
  ]);
  return PRE_BUCKETS(graph).getOrCompute(key, () => computePreBuckets(graph, knobs, topo));
}

function computePreBuckets(graph: StepGraph, knobs: PreBucketKnobs, topo: Nccl213Topology): PreBucketResult | null {
  const ix = indexGraph(graph);
  const tensors: Record<string, TensorInfo> = { ...graph.tensors };
  const irNames = new IrNames(ix);
  const buckets: PreBucket[] = [];
  const helpers = new Set<string>();
  const caps: { phase: string; capMb: number }[] = [];
  const out: GraphNode[] = [];
  const withEst = graph.nodes.some((n) => n.kind === 'all_gather' && n.estMs !== undefined);
  const regions = passRegions(ix);
  const regionOf = new Int32Array(ix.n).fill(-1);
  let disjoint = true;
  regions.forEach((region, k) => {
    for (const i of region.nodes) {
      if (regionOf[i] >= 0) disjoint = false;
      regionOf[i] = k;
    }
  });
  const leaves = leaving(ix, regions, regionOf);
  const fxNames = regions.map((g) => [...g.placeholders, ...g.nodes.map((i) => ix.nodes[i].name)].map(fxNameOf));
  regions.forEach((region, k) => {
    const nodes = region.nodes.map((i) => ix.nodes[i]);
    const namespace = () => {
      const ns = new FxNamespace(fxNames[k]);
      for (const later of fxNames.slice(k + 1)) ns.reserveEarlier(later);
      return ns;
    };
    const producers = new RegionProducers(ix, disjoint ? regionOf : null, k, nodes);
    const r = new Region(nodes, producers, leaves[k], tensors, namespace, irNames);
    const { groups, groupSize, fsdp } = identifyFsdpGroups(r);
    if (groups.size > 0) {
      const capMb = groupSize !== null ? preBucketCapMb(groupSize, knobs, topo) : 500;
      caps.push({ phase: region.phase, capMb });
      const cap = Math.floor(capMb * 1024 * 1024);
      // users and waits of the original nodes, which a merge of other collectives leaves as they are
      const users0 = disjoint ? new OriginalUsers(ix, regionOf, k) : usersOf(r);
      const ctx: MergeCtx = { r, topo, withEst, helpers, buckets, users: users0, waitOf: waitsByStart(r) };
      for (const b of greedyBuckets(r, 'all_gather', (_w, s) => fsdp.has(s), cap)) mergeAllGather(ctx, b);
      // a graph without reduce-scatters (a forward) needs no users of its merged graph
      if (r.nodes.some((n) => n.kind === 'reduce_scatter')) bucketReduceScatters(ctx, knobs, cap);
    }
    const nodesOut = groups.size > 0 ? stableSort(r.nodes, r.producer, false, r.ids) : r.nodes;
    for (const n of nodesOut) out.push(n);
  });
  if (buckets.length === 0) return null;
  const nodes = out.map((n, id) => (n.id === id ? n : { ...n, id }));
  return {
    graph: { ...graph, nodes, tensors },
    buckets,
    helpers,
    caps,
    estimator: withEst ? 'torch-2.13-analytical-nccl' : 'cost-model',
  };
}

/**
 * What each FX graph returns: its outputs and, on a built step, each wait output another graph
 * reads (the built regions leave those out, but torch's backward returns its reduce-scatters'
 * gradients, which is what makes them FSDP reduce-scatters). One pass over the graph for all regions.
 */
function leaving(
  ix: ReturnType<typeof indexGraph>,
  regions: readonly PassRegion[],
  regionOf: Int32Array, // per index node: its region, -1: none
): Set<string>[] {
  const out = regions.map((region) => new Set(region.outputs));
  if (ix.graph.fxGraphs !== undefined) return out;
  ix.nodes.forEach((n, i) => {
    if (!predInOtherRegion(ix, regionOf, i)) return; // most nodes: no tensor look-ups
    for (const t of n.inputs) {
      const p = ix.producerOf.get(t);
      const k = p === undefined ? -1 : regionOf[p]; // the region whose node writes t
      if (k >= 0 && k !== regionOf[i]) out[k].add(t);
    }
  });
  return out;
}

/** Does a predecessor of node `i` (the writers of what it reads among them) lie in another region? */
function predInOtherRegion(ix: ReturnType<typeof indexGraph>, regionOf: Int32Array, i: number): boolean {
  for (let e = ix.predOff[i]; e < ix.predOff[i + 1]; e++) if (regionOf[ix.predIdx[e]] !== regionOf[i]) return true;
  return false;
}

/**
 * ms per byte of the graph's memory-bound nodes where they carry torch's estimates (the estimator
 * torch asks for the nodes it creates is the one that timed them); undefined: the cost model times them.
 */
function memoryRate(nodes: readonly GraphNode[]): number | undefined {
  const rates = nodes
    .filter((n) => n.kind === 'compute' && !n.matmulLike && (n.estMs ?? 0) > 0 && n.bytesMoved > 0)
    .map((n) => n.estMs! / n.bytesMoved)
    .sort((a, b) => a - b);
  return rates.length > 0 ? rates[rates.length >> 1] : undefined;
}

interface MergeCtx {
  readonly r: Region;
  readonly topo: Nccl213Topology;
  readonly withEst: boolean;
  readonly helpers: Set<string>;
  readonly buckets: PreBucket[];
  users: UserTable;
  readonly waitOf: ReadonlyMap<string, GraphNode>;
}

/** The reduce-scatter buckets of the graph as the all-gather merges left it, each merged. */
function bucketReduceScatters(ctx: MergeCtx, knobs: PreBucketKnobs, cap: number): void {
  const r = ctx.r;
  const users = usersOf(r);
  ctx.users = users;
  const mergeRs = knobs.bucket_mode === 'coalesced' ? mergeReduceScatterCoalesced : mergeReduceScatter;
  for (const b of greedyBuckets(r, 'reduce_scatter', (w) => isFsdpReduceScatterWait(r, w, users), cap, users))
    mergeRs(ctx, b);
}

/** Builds the nodes of one traced merge function, named as FX copies them into the graph. */
class Builder {
  readonly made: GraphNode[] = [];
  constructor(
    private readonly ctx: MergeCtx,
    private readonly proto: GraphNode,
  ) {}

  tensor(id: string, shape: readonly number[], dtype: DType, aliasOf?: string): string {
    let numel = 1;
    for (const d of shape) numel *= d;
    const t: TensorInfo = { id, shape, dtype, bytes: numel * DTYPE_BYTES[dtype] };
    if (aliasOf !== undefined) (t as { aliasOf?: string }).aliasOf = aliasOf;
    this.ctx.r.tensors[id] = t;
    return id;
  }

  /** A node with the FX name its traced name gets; `out` names its outputs (default: one tensor named like it). */
  node(fnName: string, target: string, spec: NodeSpec): GraphNode {
    const r = this.ctx.r;
    const fx = r.ns.create(fnName);
    const name = r.irNames.take(fx);
    const outputs = spec.outputs(name);
    const bytes = spec.ioBytes ?? 0;
    const node: Mutable<GraphNode> = {
      id: r.ids.unusedId(), // numbered by position in the result
      name,
      kind: spec.kind,
      op: spec.kind === 'compute' ? 'compute' : target, // as the FX importer names a memory-bound op
      inputs: spec.inputs,
      outputs,
      flops: 0,
      bytesMoved: bytes,
      matmulLike: false,
      phase: this.proto.phase,
      attrs: { target },
    };
    // assigned rather than spread (the same keys in the same order; a spread here is a slow path)
    if (spec.kind === 'compute' && r.msPerByte !== undefined) node.estMs = bytes * r.msPerByte;
    if (spec.extra !== undefined) Object.assign(node, spec.extra);
    for (const t of outputs) r.producer.set(t, node);
    this.made.push(node);
    const comm = spec.kind === 'wait' || spec.kind === 'all_gather' || spec.kind === 'reduce_scatter';
    if (!comm) this.ctx.helpers.add(name);
    return node;
  }
}

interface NodeSpec {
  readonly kind: GraphNode['kind'];
  readonly inputs: readonly string[];
  readonly outputs: (name: string) => string[];
  readonly ioBytes?: number;
  readonly extra?: Partial<GraphNode>;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function numelOf(t: TensorInfo): number {
  let numel = 1;
  for (const d of t.shape) numel *= d;
  return numel;
}

/** torch has_mergeable_all_gather_convert_dtype: a cast feeding only this all-gather is folded into the copy-in. */
function foldedCast(r: Region, ag: GraphNode, users: UserTable): GraphNode | undefined {
  const p = r.producer.inputOf(ag, 0);
  if (p === undefined) return undefined;
  const target = String(p.attrs?.target ?? p.op);
  const isCast = p.kind === 'cast' || /(^|\.)(_to_copy|convert_element_type)(\.|$)/.test(target);
  const u = users.of(p);
  return isCast && u !== undefined && u.length === 1 && !readByOutput(r, p) ? p : undefined;
}

/** One all-gather bucket's shapes: each member's input (a folded cast's source), its numel, the gather's dtype. */
interface AllGatherPlan {
  readonly folded: (GraphNode | undefined)[];
  readonly ins: string[];
  readonly waits: GraphNode[];
  readonly numels: number[];
  readonly G: number; // group size
  readonly N: number; // the shards' summed numel
  readonly dtype: DType; // the narrowest member dtype
}

function planAllGather(ctx: MergeCtx, members: GraphNode[]): AllGatherPlan {
  const r = ctx.r;
  const folded = members.map((m) => foldedCast(r, m, ctx.users));
  const ins = members.map((m, k) => folded[k]?.inputs[0] ?? m.inputs[0]);
  const numels = ins.map((t) => numelOf(r.tensors[t]));
  return {
    folded,
    ins,
    waits: members.map((m) => ctx.waitOf.get(m.name)!),
    numels,
    G: members[0].collective!.groupSize,
    N: numels.reduce((a, b) => a + b, 0),
    dtype: members.map((m) => m.collective!.dtype).sort((a, b) => DTYPE_BYTES[a] - DTYPE_BYTES[b])[0],
  };
}

/** all_gather_merge_fn_to_trace: empty, narrow, flat views, cat, copy_, the gather into `out`, wait, split, clones. */
function mergeAllGather(ctx: MergeCtx, members: GraphNode[]): void {
  const plan = planAllGather(ctx, members);
  const b = new Builder(ctx, members[0]);
  const { empty, copy } = allGatherCopyIn(b, ctx.r, plan);
  const { N, G, dtype } = plan;
  const start = b.node('all_gather_into_tensor_out', '_c10d_functional.all_gather_into_tensor_out.default', {
    kind: 'all_gather',
    inputs: [copy.outputs[0], empty.outputs[0]],
    outputs: (n) => [b.tensor(n, [N * G], dtype, empty.outputs[0])],
    extra: collectiveFields(ctx, members, N * DTYPE_BYTES[dtype], N * G * DTYPE_BYTES[dtype]),
  });
  const wait = b.node(`wait_tensor`, '_c10d_functional.wait_tensor.default', {
    kind: 'wait',
    inputs: start.outputs,
    outputs: (n) => [b.tensor(n, [N * G], dtype, start.outputs[0])],
    extra: { waitOf: start.name, ...(members[0].params ? { params: members.flatMap((m) => m.params ?? []) } : {}) },
  });
  allGatherCopyOut(b, ctx.r, plan, wait);
  staleUsers(ctx, plan.waits);
  const folded = plan.folded.filter((f): f is GraphNode => f !== undefined);
  splice(ctx, members, plan.waits, folded, b.made, plan.ins, start, wait);
}

/** The copy-in: the (N·G) output buffer, its own shard's slice, the inputs flattened and cat, copy_ into the slice. */
function allGatherCopyIn(b: Builder, r: Region, plan: AllGatherPlan): { empty: GraphNode; copy: GraphNode } {
  const { ins, numels, N, G, dtype } = plan;
  const inDtype = r.tensors[ins[0]].dtype;
  const empty = b.node('empty', 'aten.empty.memory_format', {
    kind: 'compute',
    inputs: [],
    outputs: (n) => [b.tensor(n, [N * G], dtype)],
    ioBytes: N * G * DTYPE_BYTES[dtype],
  });
  const slice = b.node('slice_1', 'aten.slice.Tensor', {
    kind: 'view',
    inputs: empty.outputs,
    outputs: (n) => [b.tensor(n, [N], dtype, empty.outputs[0])],
  });
  const flats = ins.map((t, k) =>
    b.node(k === 0 ? 'view' : `view_${k}`, 'aten.view.default', {
      kind: 'view',
      inputs: [t],
      outputs: (n) => [b.tensor(n, [numels[k]], r.tensors[t].dtype, t)],
    }),
  );
  const inBytes = ins.reduce((s, t) => s + r.tensors[t].bytes, 0);
  const cat = b.node('cat', 'aten.cat.default', {
    kind: 'compute',
    inputs: flats.map((f) => f.outputs[0]),
    outputs: (n) => [b.tensor(n, [N], inDtype)],
    ioBytes: 2 * inBytes,
  });
  const copy = b.node('copy_', 'aten.copy_.default', {
    kind: 'compute',
    inputs: [slice.outputs[0], cat.outputs[0]],
    outputs: (n) => [b.tensor(n, [N], dtype, slice.outputs[0])],
    ioBytes: 2 * N * DTYPE_BYTES[dtype] + inBytes,
  });
  return { empty, copy };
}

/** The copy-out: the gathered buffer as (G, N) rows, split per member, each piece cloned into the member's output. */
function allGatherCopyOut(b: Builder, r: Region, plan: AllGatherPlan, wait: GraphNode): void {
  const { ins, numels, G, N, dtype } = plan;
  const rows = b.node(`view_${ins.length}`, 'aten.view.default', {
    kind: 'view',
    inputs: wait.outputs,
    outputs: (n) => [b.tensor(n, [G, N], dtype, wait.outputs[0])],
  });
  const pieces = splitAndGetitems(
    b,
    rows.outputs[0],
    numels.map((c) => [G, c]),
    dtype,
  );
  plan.waits.forEach((w, k) => {
    const o = r.tensors[w.outputs[0]];
    const clone = b.node(k === 0 ? 'clone' : `clone_${k}`, 'aten.clone.default', {
      kind: 'compute',
      inputs: [pieces[k]],
      outputs: (n) => [b.tensor(n, [G, numels[k]], dtype)],
      ioBytes: 2 * numels[k] * G * DTYPE_BYTES[dtype],
    });
    b.node(k === 0 ? '_unsafe_view' : `_unsafe_view_${k}`, 'aten._unsafe_view.default', {
      kind: 'view',
      inputs: clone.outputs,
      outputs: () => [b.tensor(w.outputs[0], o.shape, o.dtype, clone.outputs[0])],
    });
  });
}

/** reduce_scatter_merge_fn_to_trace: (G, -1) views, cat on dim 1, flatten, one reduce-scatter, wait, split, views. */
function mergeReduceScatter(ctx: MergeCtx, members: GraphNode[]): void {
  const r = ctx.r;
  const ins = members.map((m) => m.inputs[0]);
  const waits = members.map((m) => ctx.waitOf.get(m.name)!);
  const G = members[0].collective!.groupSize;
  const dtype = members[0].collective!.dtype;
  const cols = ins.map((t) => numelOf(r.tensors[t]) / G);
  const M = cols.reduce((a, b) => a + b, 0);
  const b = new Builder(ctx, members[0]);
  const k0 = ins.length;
  const rows = ins.map((t, k) =>
    b.node(k === 0 ? 'view' : `view_${k}`, 'aten.view.default', {
      kind: 'view',
      inputs: [t],
      outputs: (n) => [b.tensor(n, [G, cols[k]], r.tensors[t].dtype, t)],
    }),
  );
  const inBytes = ins.reduce((s, t) => s + r.tensors[t].bytes, 0);
  const cat = b.node('cat', 'aten.cat.default', {
    kind: 'compute',
    inputs: rows.map((x) => x.outputs[0]),
    outputs: (n) => [b.tensor(n, [G, M], dtype)],
    ioBytes: 2 * inBytes,
  });
  const flat = b.node(`view_${k0}`, 'aten.view.default', {
    kind: 'view',
    inputs: cat.outputs,
    outputs: (n) => [b.tensor(n, [G * M], dtype, cat.outputs[0])],
  });
  const full = G * M * DTYPE_BYTES[dtype];
  const start = b.node('reduce_scatter_tensor', '_c10d_functional.reduce_scatter_tensor.default', {
    kind: 'reduce_scatter',
    inputs: flat.outputs,
    outputs: (n) => [b.tensor(n, [M], dtype)],
    extra: collectiveFields(ctx, members, full, full / G),
  });
  const wait = b.node('wait_tensor', '_c10d_functional.wait_tensor.default', {
    kind: 'wait',
    inputs: start.outputs,
    outputs: (n) => [b.tensor(n, [M], dtype, start.outputs[0])],
    extra: { waitOf: start.name },
  });
  const pieces = splitAndGetitems(
    b,
    wait.outputs[0],
    cols.map((c) => [c]),
    dtype,
  );
  waits.forEach((w, k) => {
    const o = r.tensors[w.outputs[0]];
    b.node(`view_${k0 + 1 + k}`, 'aten.view.default', {
      kind: 'view',
      inputs: [pieces[k]],
      outputs: () => [b.tensor(w.outputs[0], o.shape, o.dtype, pieces[k])],
    });
  });
  staleUsers(ctx, waits.slice(0, 1)); // the other pieces sit at an offset: torch re-derives their users
  splice(ctx, members, waits, [], b.made, ins, start, wait);
}

/** bucket_mode 'coalesced': one reduce_scatter_tensor_coalesced over flat views, a wait per member (coalesced.ts). */
function mergeReduceScatterCoalesced(ctx: MergeCtx, members: GraphNode[]): void {
  const r = ctx.r;
  const ins = members.map((m) => m.inputs[0]);
  const waits = members.map((m) => ctx.waitOf.get(m.name)!);
  const full = ins.reduce((s, t) => s + r.tensors[t].bytes, 0);
  const G = members[0].collective!.groupSize;
  const b = new Builder(ctx, members[0]);
  const fields = collectiveFields(ctx, members, full, full / G);
  const trace = traceCoalescedReduceScatter(
    b,
    r.tensors,
    ins,
    waits.map((w) => w.outputs[0]),
    G,
    fields,
  );
  // each member's output keeps its layout (a fresh storage at offset 0): torch re-derives none of their users
  staleUsers(ctx, waits);
  splice(ctx, members, waits, [], b.made, ins, trace.start, trace.waits[0], trace.waits);
}

/**
 * torch re-derives a replaced value's users only where the new value's layout differs; a user
 * whose layout did not change keeps its old fake value, so a view among them still aliases the
 * erased wait's storage, which its memory tracker then sees that view allocate afresh.
 */
function staleUsers(ctx: MergeCtx, waits: readonly GraphNode[]): void {
  const r = ctx.r;
  const old = new Set(waits.map((w) => w.outputs[0]));
  for (const n of waits.flatMap((w) => ctx.users.of(w) ?? [])) {
    if (n.kind !== 'view') continue;
    for (const t of n.outputs) {
      const src = r.tensors[t]?.aliasOf;
      if (src === undefined || !old.has(src)) continue;
      const stale = `${src}#erased`;
      r.tensors[stale] ??= { ...r.tensors[src], id: stale, aliasOf: undefined };
      r.tensors[t] = { ...r.tensors[t], aliasOf: stale };
    }
  }
}

function waitsByStart(r: Region): Map<string, GraphNode> {
  const byStart = new Map<string, GraphNode>();
  for (const n of r.nodes) if (n.kind === 'wait' && n.waitOf !== undefined) byStart.set(n.waitOf, n);
  return byStart;
}

/** split_with_sizes and its getitems: the pieces' tensor ids. */
function splitAndGetitems(b: Builder, src: string, shapes: number[][], dtype: DType): string[] {
  const split = b.node('split_with_sizes', 'aten.split_with_sizes.default', {
    kind: 'view',
    inputs: [src],
    outputs: (n) => shapes.map((s, k) => b.tensor(`${n}.${k}`, s, dtype, src)),
  });
  return shapes.map(
    (s, k) =>
      b.node(k === 0 ? 'getitem' : `getitem_${k}`, 'getitem', {
        kind: 'view',
        inputs: [split.outputs[k]],
        outputs: (n) => [b.tensor(n, s, dtype, split.outputs[k])],
      }).outputs[0],
  );
}

/** The merged collective's fields: summed bytes, torch's size (inputs + output), its 2.13 estimates. */
function collectiveFields(
  ctx: MergeCtx,
  members: GraphNode[],
  inputBytes: number,
  outputBytes: number,
): Partial<GraphNode> {
  const c0 = members[0].collective!;
  const size = inputBytes + outputBytes;
  const est = ctx.withEst
    ? {
        estMs: nccl213CollectiveMs(size, c0.groupSize, c0.kind, ctx.topo),
        estMsSize0: nccl213CollectiveMs(0, c0.groupSize, c0.kind, ctx.topo),
      }
    : {};
  return {
    collective: { ...c0, inputBytes, outputBytes, members: members.map((m) => m.name) },
    sizeBytes: size,
    params: members.flatMap((m) => m.params ?? []),
    ...est,
  };
}

/**
 * torch process_collective_bucket: the new nodes go after the bucket's last collective, the
 * members, their waits and folded casts leave, and the span from the earliest input to the new
 * nodes is re-sorted.
 */
function splice(
  ctx: MergeCtx,
  members: GraphNode[],
  waits: GraphNode[],
  folded: GraphNode[],
  made: GraphNode[],
  ins: string[],
  start: GraphNode,
  wait: GraphNode,
  newWaits: readonly GraphNode[] = [wait],
): void {
  const r = ctx.r;
  r.list.insertAfter(members[members.length - 1], made);
  for (const n of [...members, ...waits, ...folded]) {
    r.list.remove(n);
    // a tensor a new node writes again (a wait's output) keeps that writer, set as it was made
    for (const t of n.outputs) if (r.producer.get(t) === n) r.producer.delete(t);
  }
  sortBucketRegion(r.list, made, ins, r.producer, r.ids);
  r.touched();
  ctx.buckets.push({
    start: start.name,
    wait: wait.name,
    waits: newWaits.map((w) => w.name),
    members: members.map((m) => m.name),
    folded: folded.map((f) => f.name),
  });
}

/** torch _sort_bucket_region: re-sort from the earliest in-graph input to the latest, new nodes included. */
function sortBucketRegion(list: FxList, made: GraphNode[], ins: string[], producer: ProducerOf, ids: NodeIds): void {
  const madeSet = new Set(made);
  const ext = new Set(
    ins.map((t) => producer.get(t)).filter((p): p is GraphNode => p !== undefined && !madeSet.has(p)),
  );
  let remaining = ext.size;
  if (remaining === 0) return;
  let first = made[0];
  let last = made[made.length - 1];
  for (let c = list.before(first); c !== null && remaining > 0; c = list.before(c)) {
    if (ext.has(c)) {
      first = c;
      remaining--;
    }
  }
  for (let c = list.after(last); c !== null && remaining > 0; c = list.after(c)) {
    if (ext.has(c)) {
      last = c;
      remaining--;
    }
  }
  if (first === last) return;
  const region = list.span(first, last);
  list.replaceSpan(last, stableSort(region, producer, true, ids));
}

/**
 * torch stable_topological_sort: nodes keep their order, except that one whose input comes
 * later waits for its last unready input and follows it. `span`: `nodes` are a merge's span, and
 * inputs from outside it count as ready.
 */
function stableSort(
  nodes: readonly GraphNode[],
  producer: ProducerOf,
  span: boolean,
  ids: NodeIds,
): readonly GraphNode[] {
  // ready, and the nodes waiting for each: a merge's small span by local number, the graph by node number
  const region = span ? new Map(nodes.map((n, k) => [n, k])) : null;
  const slot = region === null ? (n: GraphNode) => ids.of(n) : (n: GraphNode) => region.get(n) ?? -1;
  const size = region === null ? ids.size : nodes.length;
  if (inOrder(nodes, producer, region, slot, size)) return nodes; // often so for a merge's span
  const pending = [...nodes].reverse();
  const ready = new Uint8Array(size);
  const waiting = new Array<GraphNode[] | undefined>(size).fill(undefined);
  const isReady = (ref: GraphNode) => {
    const s = slot(ref);
    return s >= 0 && s < size && ready[s] === 1;
  };
  const out: GraphNode[] = [];
  while (pending.length > 0) {
    const n = pending.pop()!;
    const last = lastUnready(n, producer, region, isReady);
    if (last !== undefined) {
      const id = slot(last);
      const l = waiting[id];
      if (l) l.push(n);
      else waiting[id] = [n];
      continue;
    }
    const id = slot(n);
    ready[id] = 1;
    out.push(n);
    const w = waiting[id];
    if (w) {
      waiting[id] = undefined;
      for (let k = w.length - 1; k >= 0; k--) pending.push(w[k]);
    }
  }
  if (out.length !== nodes.length) throw new Error('pre-bucketing: the merged graph has a dependency cycle');
  return out;
}

/** Does each node come after the writers of its inputs (those in `region`; null: all)? */
function inOrder(
  nodes: readonly GraphNode[],
  producer: ProducerOf,
  region: ReadonlyMap<GraphNode, number> | null,
  slot: (n: GraphNode) => number,
  size: number,
): boolean {
  const done = new Uint8Array(size);
  for (const n of nodes) {
    for (let k = 0; k < n.inputs.length; k++) {
      const p = producer.inputOf(n, k);
      if (p === undefined || (region !== null && !region.has(p))) continue;
      const s = slot(p);
      if (s < 0 || s >= size || done[s] === 0) return false;
    }
    done[slot(n)] = 1;
  }
  return true;
}

/**
 * The last of `n`'s distinct input nodes (FX all_input_nodes order: first appearance) that is in
 * `region` (null: anywhere) and not ready; inputRefs without building the list.
 */
function lastUnready(
  n: GraphNode,
  producer: ProducerOf,
  region: ReadonlyMap<GraphNode, number> | null,
  isReady: (ref: GraphNode) => boolean,
): GraphNode | undefined {
  const ins = n.inputs;
  let last: GraphNode | undefined;
  for (let k = 0; k < ins.length; k++) {
    const ref = producer.inputOf(n, k);
    if (ref === undefined || isReady(ref)) continue;
    if (region !== null && !region.has(ref)) continue;
    let repeat = false;
    for (let j = 0; j < k && !repeat; j++) repeat = producer.inputOf(n, j) === ref;
    if (!repeat) last = ref;
  }
  return last;
}
