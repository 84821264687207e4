// Claims about a run, as checks on its data: each returns whether the data bears it out and the
// sentence to show, written from the result with its numbers (a claim that does not hold says
// what the screen shows instead). Story captions are built from these, so they stay true when
// the model, the pass or torch's defaults change the numbers underneath.

import type { SimConfig } from '../config';
import type { SideResult } from '../store';
import { GIB, formatShare, MISSING } from '../util';
import { MEMORY_NAMES } from './glossary';
import { fmtBytes, fmtUs } from './ui_format';

interface Claim {
  /** Whether the data bears the claim out. */
  readonly holds: boolean;
  /** The caption's sentence, true of the data whichever way the check came out. */
  readonly text: string;
}

/** What a claim reads: both sides of one comparison and the config they ran. */
export interface RunData {
  readonly a: SideResult;
  readonly b: SideResult;
  readonly cfg: SimConfig;
}

export type ClaimCheck = (d: RunData) => Claim;

const ag = (s: SideResult) => s.metrics.collectives.all_gather;
const rs = (s: SideResult) => s.metrics.collectives.reduce_scatter;

/** '57 %' — the share x of y, rounded to a whole percent. */
function pctOf(x: number, y: number): string {
  return formatShare(x, y, 0);
}

/** B issues at least `cut` (a fraction) fewer all-gathers than A. */
export function fewerAllGathers(cut: number): ClaimCheck {
  return ({ a, b }) => {
    const holds = ag(b) <= (1 - cut) * ag(a);
    const text = holds
      ? `B issues ${pctOf(ag(a) - ag(b), ag(a))} fewer all-gathers than A (${ag(a)} → ${ag(b)}): ` +
        'it merges neighbours into buckets, one launch each.'
      : `B issues about as many all-gathers as A (${ag(a)} → ${ag(b)}): the pass merged few of them here.`;
    return { holds, text };
  };
}

/** B leaves at most (1 − cut) of A's exposed communication exposed. */
export function hidesExposed(cut: number): ClaimCheck {
  return ({ a, b }) => {
    const ea = a.metrics.exposedCommUs;
    const eb = b.metrics.exposedCommUs;
    const holds = ea > 0 && eb <= (1 - cut) * ea;
    const text = holds
      ? `Communication the GPU waits for falls from ${fmtUs(ea)} on A (red waits) to ${fmtUs(eb)} on B: ` +
        'B starts collectives early, behind compute.'
      : `B leaves ${fmtUs(eb)} of communication exposed against A's ${fmtUs(ea)}: little of it could be hidden here.`;
    return { holds, text };
  };
}

/** Even B leaves at least `share` of its step exposed: communication, not compute, sets the step. */
export function staysExposed(share: number): ClaimCheck {
  return ({ b }) => {
    const eb = b.metrics.exposedCommUs;
    const step = b.metrics.stepTimeUs;
    const holds = eb >= share * step;
    const text = holds
      ? `Even B leaves ${fmtUs(eb)} of its ${fmtUs(step)} step exposed (${pctOf(eb, step)}): ` +
        'there is not enough compute to hide the collectives behind.'
      : `B hides most of it: ${fmtUs(eb)} of its ${fmtUs(step)} step stays exposed (${pctOf(eb, step)}).`;
    return { holds, text };
  };
}

/** B launches fewer collectives (all-gathers and reduce-scatters) than A. */
export const fewerLaunches: ClaimCheck = ({ a, b }) => {
  const na = ag(a) + rs(a);
  const nb = ag(b) + rs(b);
  const counts = `all-gathers ${ag(a)} → ${ag(b)}, reduce-scatters ${rs(a)} → ${rs(b)}`;
  return nb < na
    ? { holds: true, text: `B launches ${na - nb} fewer collectives than A (${counts}), each paying its latency once.` }
    : { holds: false, text: `B launches as many collectives as A (${counts}).` };
};

/** B's step is shorter than A's. */
export const fasterStep: ClaimCheck = ({ a, b }) => {
  const ta = a.metrics.stepTimeUs;
  const tb = b.metrics.stepTimeUs;
  const holds = tb < ta;
  const verdict = holds ? 'The step shortens' : 'The step does not shorten';
  return { holds, text: `${verdict}: ${fmtUs(ta)} on A, ${fmtUs(tb)} on B.` };
};

/** B's peak live tensors are above A's: prefetched weights stay alive longer. */
export const peakRises: ClaimCheck = ({ a, b }) => {
  const pa = a.metrics.peakMemoryBytes;
  const pb = b.metrics.peakMemoryBytes;
  const res =
    a.allocator && b.allocator
      ? `; ${MEMORY_NAMES.reserved} ${fmtBytes(a.allocator.peakReservedBytes)} → ` +
        fmtBytes(b.allocator.peakReservedBytes)
      : '';
  return pb > pa
    ? {
        holds: true,
        text:
          `B's ${MEMORY_NAMES.live} are ${fmtBytes(pb - pa)} higher (${fmtBytes(pa)} → ${fmtBytes(pb)}${res}): ` +
          'every all-gather started early keeps a full weight alive longer.',
      }
    : { holds: false, text: `B's ${MEMORY_NAMES.live} do not rise (${fmtBytes(pa)} → ${fmtBytes(pb)}${res}).` };
};

/** torch's limit on the peak's rise: max(max_memory_increase_gb, ratio × the original peak), bytes. */
export function torchMemoryLimit(cfg: SimConfig, originalPeakBytes: number): number {
  const k = cfg.autobucketing;
  return Math.max(k.max_memory_increase_gb * GIB, k.max_memory_increase_ratio * originalPeakBytes);
}

/** Whether B's rise in peak live tensors stays inside torch's memory limit, said with the pass's own estimates. */
export const peakWithinTorchLimit: ClaimCheck = ({ a, b, cfg }) => {
  const pa = a.metrics.peakMemoryBytes;
  const rise = b.metrics.peakMemoryBytes - pa;
  const limit = torchMemoryLimit(cfg, pa);
  const holds = rise <= limit;
  const stats = b.schedule?.passStats ?? [];
  const graphs = stats
    .map(
      (p) =>
        `${p.phase} ${fmtBytes(p.originalPeakBytes)} → ${fmtBytes(p.peakBytes)}, ` +
        `allowed ${fmtBytes(p.allowedPeakBytes)}`,
    )
    .join('; ');
  const over = stats.filter((p) => p.peakBytes > p.allowedPeakBytes).map((p) => p.phase);
  const past = over.length ? ` Its ${over.join(' and ')} estimate ends above the allowance all the same.` : '';
  const own = graphs
    ? ` The pass checks its limit against its own estimate of each graph (${graphs}), not the step's ` +
      `${MEMORY_NAMES.live}.${past}`
    : '';
  const text = holds
    ? `That rise is inside torch's limit of ${fmtBytes(limit)} (max_memory_increase_gb / _ratio).${own}`
    : `That is more than torch's limit of ${fmtBytes(limit)} (max_memory_increase_gb / _ratio) would allow ` +
      `on the step's ${MEMORY_NAMES.live}.${own}`;
  return { holds, text };
};

/** Every rank but the straggler sits idle waiting for it, on both sides. */
export const othersWaitForStraggler: ClaimCheck = ({ a, b, cfg }) => {
  const slow = cfg.straggler.rank;
  const idle = (s: SideResult) => {
    const others = s.metrics.perRank.filter((r) => r.rank !== slow).map((r) => r.idleUs);
    const own = s.metrics.perRank.find((r) => r.rank === slow)?.idleUs ?? NaN;
    return { others: others.length ? Math.min(...others) : NaN, own };
  };
  const ia = idle(a);
  const ib = idle(b);
  const holds = slow !== null && ia.others > ia.own && ib.others > ib.own;
  const text = holds
    ? `Every other rank sits idle at least ${fmtUs(ia.others)} on A and ${fmtUs(ib.others)} on B waiting for ` +
      `rank ${slow} (rank ${slow} itself: ${fmtUs(ia.own)} / ${fmtUs(ib.own)}): ` +
      'the slowest rank sets the step for everyone.'
    : `The other ranks are not idler than rank ${slow ?? MISSING} here (A: ${fmtUs(ia.others)} vs ${fmtUs(ia.own)}).`;
  return { holds, text };
};

/** "ranks 2 and 3 issued different buckets (…)": a hung side's mismatch in words, from the data. */
export function hangWords(s: SideResult): string | null {
  const m = s.mismatch;
  if (!m) return null;
  // a descriptor lists its members in brackets: two or more make it a bucket
  const bucketed = (op: string) => (/\[(.*)\]/.exec(op)?.[1] ?? '').includes(',');
  const what = bucketed(m.ops[0]) || bucketed(m.ops[1]) ? 'buckets' : 'collectives';
  return `hangs at collective #${m.seq}: ranks ${m.ranks[0]} and ${m.ranks[1]} issued different ${what}`;
}

/** Where a hung side's timeline ends on each rank it draws, against the mismatch marker. */
export interface HangSpan {
  /** The marker: the rank it is drawn on and when that rank issued the mismatched collective, µs. */
  readonly markerRank: number;
  readonly markerUs: number;
  /** Each drawn rank's last event end, µs, by rank (ascending). */
  readonly ends: readonly { readonly rank: number; readonly endUs: number }[];
  /** Ranks whose events run on past the marker. */
  readonly pastMarker: number;
}

/** The hung side's span from its events (what its timeline draws); null when it does not hang. */
export function hangSpan(s: SideResult): HangSpan | null {
  const m = s.mismatch;
  if (!m) return null;
  const end = new Map<number, number>();
  for (const e of s.events) end.set(e.rank, Math.max(end.get(e.rank) ?? -Infinity, e.start + e.dur));
  const ends = [...end].sort((x, y) => x[0] - y[0]).map(([rank, endUs]) => ({ rank, endUs }));
  const pastMarker = ends.filter((e) => e.endUs > m.timeUs).length;
  return { markerRank: m.ranks[1], markerUs: m.timeUs, ends, pastMarker };
}

/** 'B's timeline draws each rank up to where it stops: …' — the hung side's span, in words, from its events. */
function hangSpanWords(h: HangSpan): string {
  const marker = `the red marker shows where (rank ${h.markerRank}, ${fmtUs(h.markerUs)})`;
  if (h.ends.length === 0) return `${marker}.`;
  const first = h.ends.reduce((x, y) => (y.endUs < x.endUs ? y : x));
  const last = h.ends.reduce((x, y) => (y.endUs > x.endUs ? y : x));
  const span =
    `its ranks stop between ${fmtUs(first.endUs)} (rank ${first.rank}) and ${fmtUs(last.endUs)} ` +
    `(rank ${last.rank})`;
  const past = `${h.pastMarker} of the ${h.ends.length} ranks drawn run on past the marker`;
  return (
    `${marker}. B's timeline draws each rank up to where it stops at a collective that cannot complete: ` +
    `${span}; ${past}.`
  );
}

/** B hangs (a collective mismatch) while A runs its full step. */
export const bHangsANot: ClaimCheck = ({ a, b }) => {
  const words = hangWords(b);
  const span = hangSpan(b);
  if (!words || !span) return { holds: false, text: 'B does not hang here: every rank issued the same collectives.' };
  const aOk = a.mismatch === undefined;
  const full = aOk ? ` A runs its full ${fmtUs(a.metrics.stepTimeUs)} step.` : '';
  const forever = 'On real GPUs NCCL would wait forever';
  const text = `B ${words} (the banner names both). ${forever}; ${hangSpanWords(span)}${full}`;
  return { holds: aOk, text };
};
