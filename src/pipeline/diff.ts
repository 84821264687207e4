// A per-collective diff of two backends' runs on one rank: every original collective of the step
// graph under A matched to the same collective under B by what it moves (kind, phase, parameters),
// with where each ran, how long the compute stream waited on it, what hid it in B and why B did
// what it did. What Holistic Trace Analysis' per-collective breakdown gives for one trace, across
// two. Pure: the CLI and the app's diff table both read it.

import { bisector } from 'd3-array';
import type { Reason, Schedule } from '../backends';
import { collectiveCostBytes, type GraphNode, type StepGraph } from '../graph';
import type { TraceEvent } from '../trace';
import { formatDuration } from '../util';
import { csvOf } from './csv';
import type { PipelineResult } from './run';

/** Where one collective ran under one backend, on the diffed rank (µs on the simulated clock). */
interface DiffSide {
  /** The scheduled node that carried it: its own name, or its bucket's merged node. */
  readonly node: string;
  readonly bucketId: number | null;
  /** Collectives in that bucket (1 when not bucketed): its exposed time is shared by them. */
  readonly bucketSize: number;
  readonly startUs: number;
  readonly endUs: number;
  /** When the compute stream blocked on it; null when its wait found it done (nothing exposed). */
  readonly waitUs: number | null;
  /** Compute-stream time blocked on its wait (the wait event's duration): its exposed communication. */
  readonly exposedUs: number;
  /** Its time under compute on this rank, µs, and the compute ops that covered it (most covering first). */
  readonly hiddenUs: number;
  readonly hiddenBy: readonly string[];
}

/** A decision of B's about a collective, as its schedule states it. */
type DiffReason = Pick<Reason, 'code' | 'detail'>;

export interface DiffRow {
  /** The original collective's name in the step graph. */
  readonly name: string;
  readonly kind: string;
  readonly phase: string;
  readonly layer: number | null;
  readonly params: readonly string[];
  /** Per rank: the gathered output (all-gather) or the full input (reduce-scatter), as buckets count. */
  readonly bytes: number;
  readonly a: DiffSide | null;
  readonly b: DiffSide | null;
  /** exposed in B − exposed in A, µs (negative: B hides more). */
  readonly deltaExposedUs: number;
  /** The node B's scheduler started it behind (torch's "Overlapping collective X with node Y"), if any. */
  readonly prefetchedBehind: readonly string[];
  /** B's decisions about it (codes and their facts; src/words/ `reasonText` words each). */
  readonly reasons: readonly DiffReason[];
}

export interface BackendDiff {
  readonly rank: number;
  readonly backendA: string;
  readonly backendB: string;
  readonly rows: readonly DiffRow[];
  /** Collectives of A with no match in B, and of B with none in A (0 when both ran one graph). */
  readonly unmatchedA: number;
  readonly unmatchedB: number;
  /** Exposed µs summed over scheduled collectives (a bucket once), per side. */
  readonly exposedUsA: number;
  readonly exposedUsB: number;
}

/**
 * One side of a diff: the step graph the backend ran on (program order, the original collectives),
 * its schedule and the events of a run (a pipeline run's sim.events, or what the app holds).
 */
export interface DiffInput {
  readonly backend: string;
  readonly graph: StepGraph;
  readonly schedule: Schedule;
  readonly events: readonly TraceEvent[];
}

/** A pipeline run as a diff side. */
export const diffInputOf = (r: PipelineResult): DiffInput => ({
  backend: r.backend,
  graph: r.graph,
  schedule: r.schedule,
  events: r.sim.events,
});

/**
 * How two graphs' collectives are matched: what they move, not what they are called; one that moves
 * no parameter (an MoE all-to-all: several per block, alike but for their names) by its name.
 */
export const matchKey = (n: Pick<GraphNode, 'name' | 'params' | 'phase'> & { collective?: { kind: string } }): string =>
  `${n.collective?.kind}|${n.phase}|${n.params?.length ? [...n.params].sort().join('+') : `@${n.name}`}`;

const LAYER = /(?:^|\.)layers\.(\d+)\./;

function layerOf(n: GraphNode): number | null {
  if (n.layer !== undefined) return n.layer;
  const m = LAYER.exec(n.params?.[0] ?? '');
  return m ? Number(m[1]) : null;
}

/** Everything one side needs to describe a collective: lookups built once per diff. */
interface SideIndex {
  readonly schedule: Schedule;
  readonly container: ReadonlyMap<string, { node: string; bucketId: number | null; size: number }>;
  readonly waitOf: ReadonlyMap<string, string>; // collective node → its wait node
  readonly events: ReadonlyMap<string, TraceEvent>; // node name → its event on the rank
  readonly compute: readonly TraceEvent[]; // compute events on the rank, by start
  readonly exposedUs: number;
}

function indexSide(run: DiffInput, rank: number): SideIndex {
  const schedule = run.schedule;
  const container = new Map<string, { node: string; bucketId: number | null; size: number }>();
  for (const b of schedule.buckets)
    for (const m of b.members) container.set(m, { node: b.node, bucketId: b.id, size: b.members.length });
  const waitOf = new Map<string, string>();
  for (const n of schedule.graph.nodes) if (n.kind === 'wait' && n.waitOf) waitOf.set(n.waitOf, n.name);
  const events = new Map<string, TraceEvent>();
  const compute: TraceEvent[] = [];
  let exposedUs = 0;
  for (const e of run.events) {
    if (e.rank !== rank) continue;
    if (e.kind === 'compute') compute.push(e);
    else if (!events.has(e.name)) events.set(e.name, e);
    if (e.kind === 'wait') exposedUs += e.dur;
  }
  compute.sort((x, y) => x.start - y.start);
  return { schedule, container, waitOf, events, compute, exposedUs };
}

const BY_END = bisector((e: TraceEvent) => e.start + e.dur);

/** First index of a start-sorted, non-overlapping list whose end passes t. */
function firstEndingAfter(xs: readonly TraceEvent[], t: number): number {
  return BY_END.right(xs, t);
}

/** Compute on the rank during [start, end): total µs and the ops, most covering first (top 3). */
function coverOf(compute: readonly TraceEvent[], start: number, end: number): { us: number; by: string[] } {
  const parts: { name: string; us: number }[] = [];
  for (let i = firstEndingAfter(compute, start); i < compute.length && compute[i].start < end; i++) {
    const e = compute[i];
    const us = Math.min(end, e.start + e.dur) - Math.max(start, e.start);
    if (us > 0) parts.push({ name: e.name, us });
  }
  parts.sort((x, y) => y.us - x.us || x.name.localeCompare(y.name));
  return { us: parts.reduce((s, p) => s + p.us, 0), by: parts.slice(0, 3).map((p) => p.name) };
}

function sideOf(ix: SideIndex, name: string): DiffSide | null {
  const c = ix.container.get(name) ?? { node: name, bucketId: null, size: 1 };
  const ev = ix.events.get(c.node);
  if (!ev) return null; // not on this rank's trace (or not scheduled)
  const waitName = ix.waitOf.get(c.node);
  const wait = waitName ? ix.events.get(waitName) : undefined;
  const cover = coverOf(ix.compute, ev.start, ev.start + ev.dur);
  return {
    node: c.node,
    bucketId: c.bucketId,
    bucketSize: c.size,
    startUs: ev.start,
    endUs: ev.start + ev.dur,
    waitUs: wait ? wait.start : null,
    exposedUs: wait ? wait.dur : 0,
    hiddenUs: cover.us,
    hiddenBy: cover.by,
  };
}

const collectivesOf = (run: DiffInput): GraphNode[] => run.graph.nodes.filter((n) => n.collective);

const bytesOf = (n: GraphNode): number => collectiveCostBytes(n.collective!);

/**
 * The diff of run A against run B on `rank` (whose events both must hold). Rows follow A's
 * program order; B's collectives no A collective matches come last.
 */
export function diffBackends(a: DiffInput, b: DiffInput, rank = 0): BackendDiff {
  const ia = indexSide(a, rank);
  const ib = indexSide(b, rank);
  const bByKey = new Map<string, GraphNode>();
  for (const n of collectivesOf(b)) bByKey.set(matchKey(n), n);
  const reasons = new Map<string, DiffReason[]>();
  for (const r of b.schedule.reasons) {
    const list = reasons.get(r.node) ?? [];
    list.push({ code: r.code, detail: r.detail });
    reasons.set(r.node, list);
  }
  const behind = new Map<string, string[]>();
  for (const ps of b.schedule.passStats ?? []) {
    for (const [coll, nodes] of Object.entries(ps.overlapping)) behind.set(coll, [...nodes]);
    // a pre-bucketed collective was started behind what its merged collective was
    ps.preBucketing?.merged.forEach((m, k) => {
      const nodes = ps.overlapping[m];
      if (nodes) for (const c of ps.preBucketing!.buckets[k]) behind.set(c, [...nodes]);
    });
  }
  const used = new Set<string>();
  const row = (na: GraphNode | null, nb: GraphNode | null): DiffRow => {
    const n = (na ?? nb)!;
    const sa = na ? sideOf(ia, na.name) : null;
    const sb = nb ? sideOf(ib, nb.name) : null;
    return {
      name: n.name,
      kind: n.collective!.kind,
      phase: n.phase,
      layer: layerOf(n),
      params: n.params ?? [],
      bytes: bytesOf(n),
      a: sa,
      b: sb,
      deltaExposedUs: (sb?.exposedUs ?? 0) - (sa?.exposedUs ?? 0),
      prefetchedBehind: nb ? (behind.get(nb.name) ?? []) : [],
      reasons: nb ? (reasons.get(nb.name) ?? []) : [],
    };
  };
  const rows: DiffRow[] = [];
  let unmatchedA = 0;
  for (const na of collectivesOf(a)) {
    const nb = bByKey.get(matchKey(na)) ?? null;
    if (nb) used.add(nb.name);
    else unmatchedA++;
    rows.push(row(na, nb));
  }
  const rest = collectivesOf(b).filter((n) => !used.has(n.name));
  for (const nb of rest) rows.push(row(null, nb));
  return {
    rank,
    backendA: a.backend,
    backendB: b.backend,
    rows,
    unmatchedA,
    unmatchedB: rest.length,
    exposedUsA: ia.exposedUs,
    exposedUsB: ib.exposedUs,
  };
}

/** Plain words for B's side: what hid it, or why it stayed exposed (the table's last columns). */
export function hidesInB(r: DiffRow): string {
  if (!r.b) return 'not run in B';
  const hiddenUs = formatDuration(r.b.hiddenUs, { unit: 'µs', digits: 1 });
  const hidden = r.b.hiddenBy.length ? `${r.b.hiddenBy.join(', ')} (${hiddenUs})` : 'nothing';
  // the pass's own claim beside what the simulation shows (a prefetch can still end exposed)
  return r.prefetchedBehind.length ? `${hidden}; started behind ${r.prefetchedBehind.join(', ')}` : hidden;
}

/** The columns of a diff as CSV, and their values for a row (one place, for the CLI and the app). */
export const DIFF_COLUMNS = [
  'name',
  'kind',
  'phase',
  'layer',
  'params',
  'bytes',
  'bucketB',
  'startUsA',
  'waitUsA',
  'exposedUsA',
  'startUsB',
  'waitUsB',
  'exposedUsB',
  'deltaExposedUs',
  'hidesInB',
  'reason',
] as const;

/** One row's cells; `word` gives a reason's sentence (src/words/ `reasonText`). */
export function diffCells(
  r: DiffRow,
  word: (x: DiffReason) => string,
): Record<(typeof DIFF_COLUMNS)[number], string | number | null> {
  return {
    name: r.name,
    kind: r.kind,
    phase: r.phase,
    layer: r.layer,
    params: r.params.join(' '),
    bytes: r.bytes,
    bucketB: r.b?.bucketId ?? null,
    startUsA: r.a?.startUs ?? null,
    waitUsA: r.a?.waitUs ?? null,
    exposedUsA: r.a?.exposedUs ?? null,
    startUsB: r.b?.startUs ?? null,
    waitUsB: r.b?.waitUs ?? null,
    exposedUsB: r.b?.exposedUs ?? null,
    deltaExposedUs: r.deltaExposedUs,
    hidesInB: hidesInB(r),
    reason: r.reasons.map(word).join(' '),
  };
}

/** The diff's rows as CSV (DIFF_COLUMNS); `word` gives a reason's sentence (src/words/ `reasonText`). */
export function diffCsv(rows: readonly DiffRow[], word: (x: DiffReason) => string): string {
  return csvOf(
    DIFF_COLUMNS,
    rows.map((r) => {
      const c = diffCells(r, word);
      return DIFF_COLUMNS.map((k) => c[k]);
    }),
  );
}
