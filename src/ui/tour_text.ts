// The tour's words: what B's pass does, said with the numbers of the run on screen (a claim the
// numbers do not bear is not made), and the gestures of the input at hand. Pure, so a unit test
// reads the same sentences the tour shows.

import type { SideResult } from '../store';
import { fmtPct, fmtUs } from './ui_format';
import type { InputKind } from './input_kind';

/** Collectives B's schedule started early (distinct nodes with a 'prefetched' reason). */
function prefetchedCount(b: SideResult): number {
  return new Set((b.schedule?.reasons ?? []).filter((r) => r.code === 'prefetched').map((r) => r.node)).size;
}

/** Buckets of B that merged two or more collectives into one launch. */
function mergedBuckets(b: SideResult): { buckets: number; members: number } {
  const merged = (b.schedule?.buckets ?? []).filter((k) => k.members.length > 1);
  return { buckets: merged.length, members: merged.reduce((s, k) => s + k.members.length, 0) };
}

const PASS_WORDS =
  'The pass starts each collective as early as its budgets allow, so it runs under the compute before its use ' +
  '(overlap), and merges small ones into buckets, one launch each.';

/** The early-start and overlap sentence, from B's reasons and both sides' metrics. */
function overlapSentence(a: SideResult, b: SideResult): string {
  const early = prefetchedCount(b);
  const started = b.schedule ? `On this step it starts ${early} collective${early === 1 ? '' : 's'} early; ` : '';
  const ma = a.metrics;
  const mb = b.metrics;
  const hidden = `${fmtPct(mb.overlapPct)} of B's communication runs under compute (A: ${fmtPct(ma.overlapPct)})`;
  const exposed = `exposed communication ${fmtUs(ma.exposedCommUs)} → ${fmtUs(mb.exposedCommUs)}`;
  const verdict = mb.exposedCommUs < ma.exposedCommUs ? '' : ': here that hides no more than A does';
  return `${started}${hidden}, ${exposed}${verdict}.`;
}

/** The merging sentence: launches of both sides and B's buckets, or that nothing merged. */
function mergeSentence(a: SideResult, b: SideResult): string {
  const ca = a.metrics.collectives;
  const cb = b.metrics.collectives;
  const counts =
    `A launches ${ca.all_gather} all-gathers and ${ca.reduce_scatter} reduce-scatters, ` +
    `B ${cb.all_gather} and ${cb.reduce_scatter}`;
  const m = mergedBuckets(b);
  if (m.buckets === 0) return `${counts}: nothing merged on this step.`;
  return `${counts}: ${m.buckets} bucket${m.buckets === 1 ? '' : 's'} merge ${m.members} collectives.`;
}

/** Step 2 of the tour: what B does differently, from the two sides on screen. */
export function whatBDoes(a: SideResult | null | undefined, b: SideResult | null | undefined): string {
  if (!a || !b) return 'B runs a second backend on the same step; its timeline shows what that changes.';
  const intro =
    b.backend === 'aot_eager_autobucketing'
      ? `B runs ${b.title}, torch's overlap scheduling and bucketing pass. ${PASS_WORDS}`
      : `B runs ${b.title}, A runs ${a.title}.`;
  return `${intro} ${overlapSentence(a, b)} ${mergeSentence(a, b)}`;
}

/** 'Hover or tap' on a mouse, 'Tap' on touch: the verb for opening a definition. */
export function defineVerb(k: InputKind): string {
  return k === 'touch' ? 'Tap' : 'Hover, focus or click';
}

/** 'Click (or tap)' → the one that fits. */
export function selectVerb(k: InputKind): string {
  return k === 'touch' ? 'Tap' : 'Click';
}
