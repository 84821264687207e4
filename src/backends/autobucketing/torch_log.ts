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
  /** Every collective the log names (to match a log graph with a dump). */
  readonly collectives: Set<string>;
}

const RE = {
  start: /Overlap scheduling: Aligning runtime estimations/,
  overlap: /Overlapping collective (\S+) with node (\S+?):/,
  cannotOverlap: /cannot overlap (\S+) with (\S+?): (.*)$/,
  bucketed: /bucketed (\S+) with (\S+) using timeline position/,
  cannotBucket: /cannot bucket (\S+) with (\S+?): (.*)$/,
  results: /Overlap scheduling results: (.*)$/,
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
  };
}

/** Splits a log into the graphs torch passed (a new graph starts at each "Aligning runtime estimations"). */
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
    for (const m of line.matchAll(RE.collective)) g.collectives.add(m[1]);
    let m: RegExpExecArray | null;
    if ((m = RE.overlap.exec(line))) (g.overlapping[m[1]] ??= []).push(m[2]);
    else if ((m = RE.cannotOverlap.exec(line))) g.cannotOverlap[m[1]] = { node: m[2], why: m[3] };
    else if ((m = RE.bucketed.exec(line))) {
      const [, cand, seed] = m;
      let b = bucketOf.get(seed);
      if (!b) {
        b = [seed];
        bucketOf.set(seed, b);
        g.buckets.push(b);
      }
      b.push(cand);
    } else if ((m = RE.cannotBucket.exec(line))) g.cannotBucket[m[2]] = { seed: m[1], why: m[3] };
    else if ((m = RE.results.exec(line))) {
      for (const kv of m[1].split(',')) {
        const [k, v] = kv.split('=').map((x) => x.trim());
        const num = Number.parseFloat(v ?? '');
        if (k && Number.isFinite(num)) g.summary[k] = num;
      }
    }
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

function pairs(buckets: readonly (readonly string[])[]): Set<string> {
  const out = new Set<string>();
  for (const b of buckets) for (const x of b) for (const y of b) if (x < y) out.add(`${x}|${y}`);
  return out;
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

/** How one pass of fsdp-sim agrees with what torch logged for the same graph. */
export function compareWithTorch(p: PassStats, log: TorchLogGraph, reasons: readonly Reason[]): Agreement {
  const ours = pairs(p.buckets);
  const theirs = pairs(log.buckets);
  let both = 0;
  for (const x of ours) if (theirs.has(x)) both++;
  const prefetched = new Set([...Object.keys(p.overlapping), ...Object.keys(log.overlapping)]);
  let same = 0;
  const disagreements: Disagreement[] = [];
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
    disagreements.push({
      collective: c,
      what: 'prefetch',
      torch: b ? { kind: 'prefetched', behind: b } : { kind: 'not_prefetched', ...(co ? { cannotOverlap: co } : {}) },
      fsdpSim: a
        ? { kind: 'prefetched', behind: a }
        : reasonOf(c, (code) => code.startsWith('not_prefetched') || code === 'exposed' || code === 'program_order'),
    });
  }
  const bucketOf = (bs: readonly (readonly string[])[]) => new Map(bs.flatMap((b) => b.map((x) => [x, b] as const)));
  const ob = bucketOf(p.buckets);
  const tb = bucketOf(log.buckets);
  for (const c of new Set([...ob.keys(), ...tb.keys()])) {
    const a = [...(ob.get(c) ?? [c])].sort().join(',');
    const b = [...(tb.get(c) ?? [c])].sort().join(',');
    if (a === b) continue;
    const cb = own(log.cannotBucket, c);
    disagreements.push({
      collective: c,
      what: 'bucket',
      torch: tb.has(c)
        ? { kind: 'bucketed', with: tb.get(c)!.filter((x) => x !== c) }
        : { kind: 'not_bucketed', ...(cb ? { cannotBucket: cb } : {}) },
      fsdpSim: ob.has(c)
        ? { kind: 'bucketed', with: ob.get(c)!.filter((x) => x !== c) }
        : reasonOf(c, (code) => code.startsWith('not_bucketed')),
    });
  }
  const merged = log.buckets.reduce((s, b) => s + b.length - 1, 0);
  return {
    phase: p.phase,
    bucketAgreement: ratio(both, new Set([...ours, ...theirs]).size),
    prefetchAgreement: ratio(same, prefetched.size),
    collectivesAfter: { torch: p.collectivesBefore - merged, fsdpSim: p.collectivesAfter },
    scheduledExposedMs: {
      ...(own(log.summary, 'total_exposed_ms') !== undefined ? { torch: log.summary.total_exposed_ms } : {}),
      fsdpSim: p.scheduledExposedMs,
    },
    disagreements: disagreements.slice(0, 10),
  };
}
