// Which rank holds the others up: a collective starts only when every rank has issued it, so the
// rank that issued it last waits least on it and every other rank waits longer by the difference.
// Per collective, the rank with the shortest wait is its latecomer; the others' extra wait is time
// spent waiting for it. Summed per rank, this names the straggler of a jitter or straggler run,
// and the compute op the latecomer was running when the collective should have started.

import { EMIT_ALL_BELOW } from '../sim';
import type { TraceEvent } from '../trace';

interface RankBlame {
  readonly rank: number;
  /** Σ over collectives it came last to: the other ranks' mean extra wait, µs. */
  readonly heldUpUs: number;
  /** Collectives it came last to (with a spread above the tolerance). */
  readonly collectives: number;
}

export interface Culprit {
  /** Ranks by blame, largest first (ranks that held no one up are left out). */
  readonly ranks: readonly RankBlame[];
  /** The collective the others waited longest on, who came last to it, and what that rank ran just before. */
  readonly worst: {
    readonly collective: string;
    readonly rank: number;
    readonly spreadUs: number;
    readonly op: string | null;
  } | null;
}

/**
 * Events the culprit may simulate to compare ranks (ranks × the step graph's nodes): past it, a
 * run whose every rank differs (jitter) at EMIT_ALL_BELOW ranks and up is not emitted per rank.
 */
export const CULPRIT_EVENT_BUDGET = 4_000_000;

/**
 * Why the culprit is not computed: every rank runs differently (`jitter`, or a straggler on a
 * `mesh`), and comparing all `ranks` would simulate `events` events, more than `budget`.
 */
interface CulpritSkip {
  readonly why: 'jitter' | 'mesh';
  readonly ranks: number;
  readonly events: number;
  readonly budget: number;
}

/** Which ranks a run must emit for findCulprit, or why it cannot name the culprit (src/words/ words it). */
export interface CulpritPlan {
  /** Undefined: the simulator's default (every rank below EMIT_ALL_BELOW). */
  readonly emitRanks?: readonly number[];
  readonly skipped?: CulpritSkip;
}

export interface CulpritRun {
  readonly worldSize: number;
  /** The diffed rank: always emitted. */
  readonly rank: number;
  readonly nodes: number;
  readonly jitterPct: number;
  readonly straggler: number | null;
  /** A 1-D mesh: every rank shares every process group, so all but the straggler run alike. */
  readonly oneDim: boolean;
}

/**
 * The ranks to emit so the culprit is the whole world's: every rank below EMIT_ALL_BELOW (the
 * default) or within CULPRIT_EVENT_BUDGET; a straggler without jitter on a 1-D mesh needs only
 * itself, the diffed rank and one other (the rest wait as that one does, so the mean wait is the
 * same); a symmetric run only the diffed rank (no one holds anyone up). Otherwise `skipped` says why not.
 */
export function culpritPlan(r: CulpritRun): CulpritPlan {
  const all = Array.from({ length: r.worldSize }, (_, k) => k);
  if (r.worldSize < EMIT_ALL_BELOW) return {};
  if (r.jitterPct === 0 && r.straggler === null) return { emitRanks: [r.rank] };
  if (r.worldSize * r.nodes <= CULPRIT_EVENT_BUDGET) return { emitRanks: all };
  if (r.jitterPct === 0 && r.straggler !== null && r.oneDim) {
    const other = all.find((k) => k !== r.rank && k !== r.straggler)!;
    return { emitRanks: [...new Set([r.rank, r.straggler, other])].sort((a, b) => a - b) };
  }
  const why = r.jitterPct > 0 ? 'jitter' : 'mesh';
  return {
    emitRanks: [r.rank],
    skipped: { why, ranks: r.worldSize, events: r.worldSize * r.nodes, budget: CULPRIT_EVENT_BUDGET },
  };
}

/** Spreads below this are rounding, not waiting (µs). */
const TOLERANCE_US = 1e-6;

/** Wait µs per collective node per rank (0 where a rank's wait found it done: no wait event). */
function waitsByCollective(
  events: readonly TraceEvent[],
  waitOf: Readonly<Record<string, string>>,
  ranks: readonly number[],
): Map<string, Map<number, number>> {
  const out = new Map<string, Map<number, number>>();
  for (const e of events) {
    if (!(e.stream !== 'compute' && e.kind !== 'wait' && e.kind !== 'compute')) continue;
    if (!out.has(e.name)) out.set(e.name, new Map(ranks.map((r) => [r, 0])));
  }
  for (const e of events) {
    const coll = e.kind === 'wait' && Object.hasOwn(waitOf, e.name) ? waitOf[e.name] : undefined;
    const m = coll === undefined ? undefined : out.get(coll);
    if (m) m.set(e.rank, (m.get(e.rank) ?? 0) + e.dur);
  }
  return out;
}

/** The last compute op on `rank` that started before `t` (what the latecomer was busy with). */
function opBefore(events: readonly TraceEvent[], rank: number, t: number): string | null {
  let best: TraceEvent | null = null;
  for (const e of events)
    if (e.rank === rank && e.kind === 'compute' && e.start < t && (!best || e.start > best.start)) best = e;
  return best?.name ?? null;
}

/**
 * Blame per rank from a multi-rank simulation's events (every rank emitted) and the schedule's
 * waitOf (wait node → collective node). A symmetric run blames no one.
 */
export function findCulprit(events: readonly TraceEvent[], waitOf: Readonly<Record<string, string>>): Culprit {
  const ranks = [...new Set(events.map((e) => e.rank))].sort((a, b) => a - b);
  const blame = new Map<number, { heldUpUs: number; collectives: number }>();
  let worst: { collective: string; rank: number; spreadUs: number } | null = null;
  if (ranks.length < 2) return { ranks: [], worst: null };
  for (const [coll, waits] of waitsByCollective(events, waitOf, ranks)) {
    let late = ranks[0];
    for (const r of ranks) if ((waits.get(r) ?? 0) < (waits.get(late) ?? 0)) late = r; // ties: the lowest rank
    const least = waits.get(late) ?? 0;
    const extra = ranks.filter((r) => r !== late).map((r) => (waits.get(r) ?? 0) - least);
    let spread = 0;
    for (const x of extra) spread = Math.max(spread, x);
    if (!(spread > TOLERANCE_US)) continue;
    const b = blame.get(late) ?? { heldUpUs: 0, collectives: 0 };
    b.heldUpUs += extra.reduce((s, x) => s + x, 0) / extra.length;
    b.collectives++;
    blame.set(late, b);
    if (!worst || spread > worst.spreadUs) worst = { collective: coll, rank: late, spreadUs: spread };
  }
  const start = worst ? events.find((e) => e.name === worst.collective && e.rank === worst.rank)?.start : undefined;
  return {
    ranks: [...blame.entries()]
      .map(([rank, b]) => ({ rank, ...b }))
      .sort((x, y) => y.heldUpUs - x.heldUpUs || x.rank - y.rank),
    worst: worst ? { ...worst, op: start === undefined ? null : opBefore(events, worst.rank, start) } : null,
  };
}
