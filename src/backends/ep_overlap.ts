// graph_trainer's EP-overlap scheduling (`--compile.ep_overlap.*`; torchtitan b5bcd76,
// experiments/graph_trainer/ep_overlap_pass.py), on the regions graph/ep_chunk.ts chunked. Its
// contract, per region: exactly two chunks whose token exchanges (the dispatch and combine
// all-to-alls; the counts exchange is not a marker) match; each marker's closure (what it needs in
// its chunk) is emitted chunk by chunk, the marker pairs in chunk order 0 then 1 in the forward and
// 1 then 0 in the backward; after each pair, the body work that is ready and waits on no collective
// runs as filler; the rest (waits allowed) last. On MoE roots both chunks' setup precedes the first
// pair (pair_first_token_exchange). So one chunk computes while the other's all-to-all is in flight.
// The token-count D2H copies it also orders are not modelled (docs/moe.md).

import {
  assembleChunked,
  chunkEpRegions,
  GraphError,
  withMaterializations,
  type ChunkedRegion,
  type EpChunkOptions,
  type GraphNode,
  type StepGraph,
} from '../graph';
import { weakMemo } from '../util';

type Chunk = 0 | 1;

const isMarker = (n: GraphNode): boolean => n.kind === 'all_to_all' && n.attrs?.epTokenExchange !== undefined;
const isCounts = (n: GraphNode): boolean => n.kind === 'all_to_all' && n.attrs?.epTokenExchange === undefined;
const isComm = (n: GraphNode): boolean => n.collective !== undefined || n.kind === 'wait';

/** Dependencies inside a region: producers among its bodies; a marker also needs its chunk's counts. */
function regionDeps(r: ChunkedRegion): Map<GraphNode, GraphNode[]> {
  const producer = new Map<string, GraphNode>();
  for (const n of [...r.bodies[0], ...r.bodies[1]]) for (const t of n.outputs) producer.set(t, n);
  const byName = new Map([...r.bodies[0], ...r.bodies[1]].map((n) => [n.name, n]));
  const deps = new Map<GraphNode, GraphNode[]>();
  for (const body of r.bodies) {
    const countWaits: GraphNode[] = [];
    for (const n of body) {
      const own = n.inputs.map((t) => producer.get(t)).filter((p): p is GraphNode => p !== undefined);
      // the dispatch's split sizes are the counts exchange's result, read on the host (.tolist())
      deps.set(n, isMarker(n) ? [...own, ...countWaits] : own);
      const waited = n.waitOf === undefined ? undefined : byName.get(n.waitOf);
      if (waited !== undefined && isCounts(waited)) countWaits.push(n);
    }
  }
  return deps;
}

/** The body nodes of `body` a marker needs, itself included, in program order (_marker_closure). */
function closureOf(marker: GraphNode, body: readonly GraphNode[], deps: Map<GraphNode, GraphNode[]>): GraphNode[] {
  const own = new Set(body);
  const need = new Set<GraphNode>();
  const stack = [marker];
  while (stack.length > 0) {
    const n = stack.pop() as GraphNode;
    if (need.has(n)) continue;
    need.add(n);
    for (const d of deps.get(n) ?? []) {
      if (!own.has(d)) throw new GraphError(`ep_overlap: ${marker.name} needs ${d.name} of the peer chunk`);
      stack.push(d);
    }
  }
  return body.filter((n) => need.has(n));
}

/** The markers of both chunks, checked against the contract: as many, with the same labels. */
function markersOf(r: ChunkedRegion): [GraphNode[], GraphNode[]] {
  const [m0, m1] = r.bodies.map((b) => b.filter(isMarker));
  const labels = (m: GraphNode[]) => m.map((n) => n.attrs?.epTokenExchange).join(',');
  if (labels(m0) !== labels(m1)) {
    throw new GraphError(
      `ep_overlap expected matching token exchanges for ${r.root} (${r.phase}): ${labels(m0)} vs ${labels(m1)}`,
    );
  }
  return [m0, m1];
}

interface Emission {
  readonly out: GraphNode[];
  readonly emitted: Set<GraphNode>;
  readonly deps: Map<GraphNode, GraphNode[]>;
}

function append(e: Emission, nodes: readonly GraphNode[]): void {
  for (const n of nodes) {
    if (e.emitted.has(n)) continue;
    e.out.push(n);
    e.emitted.add(n);
  }
}

/** Emits ready candidates wave by wave (chunk order, then program order) until none is (_append_ready_blocks). */
function appendReady(e: Emission, candidates: readonly (readonly GraphNode[])[], withComm: boolean): boolean {
  let progress = false;
  for (;;) {
    const ready = new Set<GraphNode>();
    for (const list of candidates) {
      for (const n of list) {
        if (e.emitted.has(n) || (!withComm && isComm(n))) continue;
        if ((e.deps.get(n) ?? []).every((d) => e.emitted.has(d))) ready.add(n);
      }
    }
    if (ready.size === 0) return progress;
    append(e, [...ready]);
    progress = true;
  }
}

/** The region's body in the contract's order (_build_region_phases); `pairFirst` on MoE roots. */
function regionSequence(r: ChunkedRegion, pairFirst: boolean): GraphNode[] {
  const markers = markersOf(r);
  if (markers[0].length === 0) return [...r.bodies[0], ...r.bodies[1]]; // no token exchange: not scheduled
  const deps = regionDeps(r);
  const order: Chunk[] = r.phase === 'backward' ? [1, 0] : [0, 1];
  const pos = new Map(r.bodies.flatMap((body) => body.map((n, k) => [n, k] as const))); // program order in its chunk
  const byPosition = (nodes: Iterable<GraphNode>) =>
    [...new Set(nodes)].sort((a, b) => (pos.get(a) ?? 0) - (pos.get(b) ?? 0));
  const closures = r.bodies.map((body, c) => markers[c].map((m) => closureOf(m, body, deps)));
  const filler = r.bodies.map((body, c) => {
    const needed = new Set(closures[c].flat());
    return body.filter((n) => !needed.has(n));
  });
  const launches = new Set([...markers[0], ...markers[1]]);
  const e: Emission = { out: [], emitted: new Set(), deps };
  for (let i = 0; i < markers[0].length; i++) {
    if (i === 0 && pairFirst) {
      for (const c of order)
        append(
          e,
          closures[c][0].filter((n) => !launches.has(n)),
        );
      for (const c of order)
        append(
          e,
          closures[c][0].filter((n) => launches.has(n)),
        );
    } else for (const c of order) append(e, closures[c][i]);
    const later = (c: Chunk) =>
      closures[c]
        .slice(i + 1)
        .flat()
        .filter((n) => !launches.has(n));
    appendReady(
      e,
      order.map((c) => byPosition([...later(c), ...filler[c]])),
      false,
    );
  }
  const remaining = order.map((c) => r.bodies[c].filter((n) => !e.emitted.has(n)));
  for (let progress = true; progress; ) {
    progress = false;
    for (const list of remaining) progress = appendReady(e, [list], true) || progress;
  }
  if (e.out.length !== r.bodies[0].length + r.bodies[1].length) {
    throw new GraphError(`ep_overlap could not schedule every body node of ${r.root} (${r.phase})`);
  }
  return e.out;
}

/** The step graph chunked and scheduled for EP overlap (the chunk, process-group and schedule passes). */
function scheduleEpOverlap(graph: StepGraph, opts: EpChunkOptions): StepGraph {
  const step = chunkEpRegions(graph, opts);
  const pairFirst = opts.moduleFqn === 'layers.*.moe'; // passes.py: pair_first_token_exchange
  const sequences = step.regions.map((r) => [
    ...r.splits,
    ...withMaterializations(regionSequence(r, pairFirst), r.materializations),
  ]);
  return assembleChunked(step, sequences);
}

// one graph per (graph, options), so the backends' per-graph caches (indexGraph) keep hitting
const byOptions = weakMemo(
  (graph: StepGraph) => graph,
  () => new Map<string, StepGraph>(),
);

/** `graph` chunked and scheduled for EP overlap as `opts` selects. */
export function epOverlapGraph(graph: StepGraph, opts: EpChunkOptions): StepGraph {
  const cache = byOptions(graph);
  const key = `${opts.chunkDim} ${opts.moduleFqn}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const out = scheduleEpOverlap(graph, opts);
  cache.set(key, out);
  return out;
}
