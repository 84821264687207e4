// Reads torch's DEBUG log of schedule_overlap_bucketing (the overlap_scheduling and
// overlap_preserving_bucketer loggers: TORCH_LOGS or logging.getLogger(...).setLevel(DEBUG)) and
// measures how far fsdp-sim's decisions agree with the ones torch logged on the same graph.
// Lines are matched by their message, so any log formatter prefix works.

import type { PassStats, Reason } from '../schedule_types';

/** What torch logged for one graph it passed. */
export interface TorchLogGraph {
  /** "Overlapping collective X with node Y": collective → the nodes that prefetched it. */
  readonly overlapping: Record<string, string[]>;
  /** Buckets from "bucketed A with SEED": the seed first, then members in the order they joined. */
  readonly buckets: string[][];
  /** Last "cannot bucket SEED with X: why" per collective X, and "cannot overlap X with Y: why". */
  readonly cannotBucket: Record<string, { seed: string; why: string }>;
  readonly cannotOverlap: Record<string, { node: string; why: string }>;
  /** The "Overlap scheduling results" fields (total_exposed_ms, …), when logged. */
  readonly summary: Record<string, number>;
  /** Every collective torch's own lines name (to match a log graph with a dump). */
  readonly collectives: Set<string>;
  /** Collectives torch scheduled, prefetched or bucketed on their own (not merged before scheduling). */
  readonly scheduled: Set<string>;
}

const RE = {
  start: /Overlap scheduling: Aligning runtime estimations/,
  overlap: /Overlapping collective (\S+) with node (\S+?):/,
  cannotOverlap: /cannot overlap (\S+) with (\S+?): (.*)$/,
  bucketed: /bucketed (\S+) with (\S+) using timeline position/,
  cannotBucket: /cannot bucket (\S+) with (\S+?): (.*)$/,
  results: /Overlap scheduling results: (.*)$/,
  scheduledNode: /Scheduled node (\S+?): current_memory=/,
  group: /bucketing collective group with key .*: \[(.*)\]$/,
  collective: /\b((?:all_gather_into_tensor|reduce_scatter_tensor|all_reduce)(?:_\d+)?)\b/g,
};

/** A record keyed by user strings: no prototype, so `constructor` or `__proto__` is a name like any other. */
const dict = <V>(): Record<string, V> => Object.create(null) as Record<string, V>;

/** rec[key] when rec has it as its own key. */
const own = <V>(rec: Readonly<Record<string, V>>, key: string): V | undefined =>
  Object.hasOwn(rec, key) ? rec[key] : undefined;

function emptyGraph(): TorchLogGraph {
  return {
    overlapping: dict(),
    buckets: [],
    cannotBucket: dict(),
    cannotOverlap: dict(),
    summary: dict(),
    collectives: new Set(),
    scheduled: new Set(),
  };
}

/** The collectives `text` names (torch's node names: `all_gather_into_tensor_3`, ...). */
const collectivesIn = (text: string): string[] => [...text.matchAll(RE.collective)].map((m) => m[1]);

/** One line of torch's pass into `g`: true when it is one of torch's own lines (the message, any prefix). */
function readLine(g: TorchLogGraph, line: string, bucketOf: Map<string, string[]>): boolean {
  const names = (...xs: string[]) => {
    for (const x of xs) for (const c of collectivesIn(x)) g.collectives.add(c);
  };
  const scheduled = (x: string) => {
    for (const c of collectivesIn(x)) g.scheduled.add(c);
  };
  let m: RegExpExecArray | null;
  if ((m = RE.overlap.exec(line))) {
    (g.overlapping[m[1]] ??= []).push(m[2]);
    names(m[1]);
    scheduled(m[1]);
  } else if ((m = RE.cannotOverlap.exec(line))) {
    g.cannotOverlap[m[1]] = { node: m[2], why: m[3] };
    names(m[1]);
  } else if ((m = RE.bucketed.exec(line))) {
    const [, cand, seed] = m;
    let b = bucketOf.get(seed);
    if (!b) {
      b = [seed];
      bucketOf.set(seed, b);
      g.buckets.push(b);
    }
    b.push(cand);
    names(cand, seed);
    scheduled(`${cand} ${seed}`);
  } else if ((m = RE.cannotBucket.exec(line))) {
    g.cannotBucket[m[2]] = { seed: m[1], why: m[3] };
    names(m[1], m[2]);
  } else if ((m = RE.scheduledNode.exec(line))) {
    names(m[1]);
    scheduled(m[1]);
  } else if ((m = RE.group.exec(line))) names(m[1]);
  else if ((m = RE.results.exec(line))) {
    for (const kv of m[1].split(',')) {
      const [k, v] = kv.split('=').map((x) => x.trim());
      const num = Number.parseFloat(v ?? '');
      if (k && Number.isFinite(num)) g.summary[k] = num;
    }
  } else return RE.start.test(line);
  return true;
}

/**
 * Splits a log into the graphs torch passed (a new graph starts at each "Aligning runtime
 * estimations"). Only torch's own lines count: a name in any other text (an FX dump, a note) is not
 * a decision; a graph none of whose lines name a collective is dropped.
 */
export function parseTorchPassLog(text: string): TorchLogGraph[] {
  const graphs: TorchLogGraph[] = [];
  let g: TorchLogGraph | undefined;
  const bucketOf = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    if (g === undefined || RE.start.test(line)) {
      g = emptyGraph();
      graphs.push(g);
      bucketOf.clear();
    }
    readLine(g, line, bucketOf);
  }
  return graphs.filter((x) => x.collectives.size > 0);
}

/** One side's decision on a collective the two decide differently (worded by src/words/ `decisionText`). */
export type Decision =
  | { readonly kind: 'prefetched'; readonly behind: string }
  | { readonly kind: 'not_prefetched'; readonly cannotOverlap?: { readonly node: string; readonly why: string } }
  | { readonly kind: 'bucketed'; readonly with: readonly string[] }
  | { readonly kind: 'not_bucketed'; readonly cannotBucket?: { readonly seed: string; readonly why: string } }
  /** fsdp-sim's own reason for not doing it (undefined: none recorded). */
  | { readonly kind: 'reason'; readonly reason: Reason | undefined };

interface Disagreement {
  readonly collective: string;
  readonly what: 'bucket' | 'prefetch';
  readonly torch: Decision;
  readonly fsdpSim: Decision;
}

export interface Agreement {
  readonly phase: string;
  /** Pairs of collectives in one bucket on both sides / pairs in one bucket on either side (1 when neither buckets). */
  readonly bucketAgreement: number;
  /** Collectives prefetched behind the same node on both sides / collectives prefetched on either side. */
  readonly prefetchAgreement: number;
  readonly collectivesAfter: { readonly torch: number; readonly fsdpSim: number };
  readonly scheduledExposedMs: { readonly torch?: number; readonly fsdpSim: number };
  /** The first disagreements (up to 10), with both sides' reasons. */
  readonly disagreements: readonly Disagreement[];
}

/** Each member's bucket (an index), the last bucket naming it winning, as a Set of pairs would count it. */
function bucketIndex(buckets: readonly (readonly string[])[]): Map<string, number> {
  const of = new Map<string, number>();
  for (const [i, b] of buckets.entries()) for (const x of b) of.set(x, i);
  return of;
}

/** Sizes of the buckets by index, as `bucketIndex` assigns members. */
function bucketSizes(of: ReadonlyMap<string, number>): Map<number, number> {
  const n = new Map<number, number>();
  for (const i of of.values()) n.set(i, (n.get(i) ?? 0) + 1);
  return n;
}

const pairsOf = (n: number) => (n * (n - 1)) / 2;

/**
 * Pairs in one bucket on both sides, on either side: counted from the members' bucket indexes,
 * linear in the members (never the pairs themselves: a 20,000-member bucket has 2·10⁸).
 */
function pairAgreement(ours: ReadonlyMap<string, number>, theirs: ReadonlyMap<string, number>) {
  const common = new Map<string, number>();
  for (const [x, i] of ours) {
    const j = theirs.get(x);
    if (j !== undefined) common.set(`${i}|${j}`, (common.get(`${i}|${j}`) ?? 0) + 1);
  }
  let both = 0;
  for (const n of common.values()) both += pairsOf(n);
  let either = -both;
  for (const n of bucketSizes(ours).values()) either += pairsOf(n);
  for (const n of bucketSizes(theirs).values()) either += pairsOf(n);
  return { both, either, common };
}

const ratio = (both: number, either: number) => (either === 0 ? 1 : both / either);

/** Pairs each pass with the log graph naming most of its collectives (the n-th graph breaks ties). */
export function matchLogGraphs(
  stats: readonly PassStats[],
  logs: readonly TorchLogGraph[],
): (TorchLogGraph | undefined)[] {
  return stats.map((p, k) => {
    let best: TorchLogGraph | undefined;
    let bestScore = 0;
    for (const [j, g] of logs.entries()) {
      const score = p.collectives.filter((n) => g.collectives.has(n)).length + (j === k ? 0.5 : 0);
      if (score > bestScore) {
        best = g;
        bestScore = score;
      }
    }
    return best;
  });
}

/** The first disagreements kept (each with both sides' reasons). */
const MAX_DISAGREEMENTS = 10;

/** How one pass of fsdp-sim agrees with what torch logged for the same graph; linear in the collectives. */
export function compareWithTorch(p: PassStats, log: TorchLogGraph, reasons: readonly Reason[]): Agreement {
  const ob = bucketIndex(p.buckets);
  const tb = bucketIndex(log.buckets);
  const { both, either, common } = pairAgreement(ob, tb);
  const prefetched = new Set([...Object.keys(p.overlapping), ...Object.keys(log.overlapping)]);
  let same = 0;
  const disagreements: Disagreement[] = [];
  const add = (d: () => Disagreement) => {
    if (disagreements.length < MAX_DISAGREEMENTS) disagreements.push(d());
  };
  const reasonOf = (c: string, codes: (code: string) => boolean): Decision => ({
    kind: 'reason',
    reason: reasons.filter((r) => r.node.replace(/\.bw$/, '') === c && codes(r.code)).pop(),
  });
  for (const c of prefetched) {
    const a = (own(p.overlapping, c) ?? []).join(',');
    const b = (own(log.overlapping, c) ?? []).join(',');
    if (a === b) {
      same++;
      continue;
    }
    const co = own(log.cannotOverlap, c);
    add(() => ({
      collective: c,
      what: 'prefetch',
      torch: b ? { kind: 'prefetched', behind: b } : { kind: 'not_prefetched', ...(co ? { cannotOverlap: co } : {}) },
      fsdpSim: a
        ? { kind: 'prefetched', behind: a }
        : reasonOf(c, (code) => code.startsWith('not_prefetched') || code === 'exposed' || code === 'program_order'),
    }));
  }
  const [oSize, tSize] = [bucketSizes(ob), bucketSizes(tb)];
  for (const c of new Set([...ob.keys(), ...tb.keys()])) {
    const [i, j] = [ob.get(c), tb.get(c)];
    // one member set on both sides: the same size, all of it in common (a collective alone is a set of one)
    const a = i === undefined ? 1 : oSize.get(i)!;
    const b = j === undefined ? 1 : tSize.get(j)!;
    const shared = i !== undefined && j !== undefined ? common.get(`${i}|${j}`)! : 1;
    if (a === b && shared === a) continue;
    const cb = own(log.cannotBucket, c);
    const others = (bs: readonly (readonly string[])[], k: number) => bs[k].filter((x) => x !== c);
    add(() => ({
      collective: c,
      what: 'bucket',
      torch:
        j !== undefined
          ? { kind: 'bucketed', with: others(log.buckets, j) }
          : { kind: 'not_bucketed', ...(cb ? { cannotBucket: cb } : {}) },
      fsdpSim:
        i !== undefined
          ? { kind: 'bucketed', with: others(p.buckets, i) }
          : reasonOf(c, (code) => code.startsWith('not_bucketed')),
    }));
  }
  const merged = log.buckets.reduce((s, b) => s + b.length - 1, 0);
  return {
    phase: p.phase,
    bucketAgreement: ratio(both, either),
    prefetchAgreement: ratio(same, prefetched.size),
    collectivesAfter: { torch: p.collectivesBefore - merged, fsdpSim: p.collectivesAfter },
    scheduledExposedMs: {
      ...(own(log.summary, 'total_exposed_ms') !== undefined ? { torch: log.summary.total_exposed_ms } : {}),
      fsdpSim: p.scheduledExposedMs,
    },
    disagreements,
  };
}

/** Why a log and a run may not be of one pass (worded by src/words/ `logMismatchText`). */
export type LogMismatch =
  /** The log names collectives the graph does not have: a log of another graph (or one pre-bucketed first). */
  | {
      readonly kind: 'other_graph';
      readonly phase: string;
      readonly names: readonly string[];
      readonly count: number;
      readonly preBucketedHere: boolean;
    }
  /** This run's FSDP pre-bucketing (torch 2.13's knobs) merged collectives that torch's log scheduled one by one. */
  | {
      readonly kind: 'pre_bucketed_here';
      readonly phase: string;
      readonly names: readonly string[];
      readonly count: number;
    }
  /** Same graph, other runtimes: torch's sum of collective estimates or its original peak differ from this run's. */
  | {
      readonly kind: 'other_runtimes';
      readonly phase: string;
      readonly potentialExposedMs: { readonly torch: number; readonly fsdpSim: number };
      readonly originalPeakBytes: { readonly torch?: number; readonly fsdpSim: number };
    };

/** Two of torch's logged figures differ: more than its 2 printed decimals, or than 0.5 %. */
const differs = (logged: number | undefined, ours: number, abs: number) =>
  logged !== undefined && Math.abs(logged - ours) > Math.max(abs, 0.005 * Math.max(Math.abs(logged), Math.abs(ours)));

/**
 * What says the log is not of this pass, before any agreement is computed: names the graph lacks,
 * collectives torch scheduled alone that this run pre-bucketed (a profile mismatch), or other
 * estimates or peaks for the same names (another world size, other runtimes). Linear.
 */
export function logMismatches(p: PassStats, log: TorchLogGraph): LogMismatch[] {
  const pre = p.preBucketing?.buckets.filter((b) => b.length > 1).flat() ?? [];
  const known = new Set([...p.collectives, ...pre]);
  const unknown = [...log.collectives].filter((c) => !known.has(c));
  if (unknown.length)
    return [
      {
        kind: 'other_graph',
        phase: p.phase,
        names: unknown.slice(0, 3),
        count: unknown.length,
        preBucketedHere: p.preBucketing !== undefined,
      },
    ];
  const merged = new Set(pre);
  const alone = [...log.scheduled].filter((c) => merged.has(c));
  if (alone.length)
    return [{ kind: 'pre_bucketed_here', phase: p.phase, names: alone.slice(0, 3), count: alone.length }];
  const potential = own(log.summary, 'total_potential_exposed_ms');
  const peak = own(log.summary, 'original_peak_memory');
  if (differs(potential, p.potentialExposedMs, 0.01) || differs(peak, p.originalPeakBytes, 1))
    return [
      {
        kind: 'other_runtimes',
        phase: p.phase,
        potentialExposedMs: { torch: potential ?? Number.NaN, fsdpSim: p.potentialExposedMs },
        originalPeakBytes: { ...(peak !== undefined ? { torch: peak } : {}), fsdpSim: p.originalPeakBytes },
      },
    ];
  return [];
}
