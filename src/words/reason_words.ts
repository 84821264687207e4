// The sentences of the backends' reasons (schedule.reasons): one per decision, in plain words
// with torch's and torchtitan's names, from the facts each reason carries. What the explain
// panel, the diff table and the CLI (`pass --json`, `diff`) show.

import type { NotBucketedWhy, PrefetchRefusalDetail, Reason, ReasonDetail } from '../backends';
import type { BackendDiff } from '../pipeline';
import { formatDuration, formatPercent, sizeText } from '../util';

/** torch's estimates are ms; the app writes durations from µs. */
const fmtMs = (ms: number) => formatDuration(ms * 1000);

/** The share of a collective's estimate that ended hidden, whole percent. */
const hiddenPct = (estMs: number, exposedMs: number) =>
  formatPercent(estMs > 0 ? Math.round((100 * (estMs - exposedMs)) / estMs) : 100, 0);

function refusalText(behind: string, r: PrefetchRefusalDetail): string {
  const by = `not prefetched behind ${behind}`;
  switch (r.code) {
    case 'not_prefetched_compute_distance':
      return `${by}: needed ${r.computeNodesAhead} compute nodes later, beyond max_compute_pre_fetch.`;
    case 'not_prefetched_in_flight_budget':
      return `${by}: in-flight budget full (${sizeText(r.bytes)} > max_in_flight_gb ${sizeText(r.limitBytes)}).`;
    case 'not_prefetched_memory_budget':
      return (
        `${by}: memory would reach ${sizeText(r.bytes)} > allowed ${sizeText(r.limitBytes)} (original peak ` +
        `${sizeText(r.originalPeakBytes)} + max(max_memory_increase_gb, max_memory_increase_ratio × peak)).`
      );
    case 'not_prefetched_depends_on_compute': {
      if (r.blocker === null) return `${by}: it depends on that node.`;
      const what = r.wait
        ? `wait ${r.blocker}, whose collective is not yet hidden`
        : `${r.blocker}, which had not run yet`;
      return `${by}: it needs ${what}.`;
    }
  }
}

function notBucketedText(why: NotBucketedWhy, seed: string): string {
  const head = `not bucketed with ${seed}`;
  switch (why) {
    case 'hides_other':
      return 'not bucketed: its start or wait hides another collective (torch does not bucket those yet).';
    case 'byte_cap':
      return `${head}: the bucket would exceed max_bucket_memory_gb.`;
    case 'ancestor':
      return `${head}: a dependency links it to a bucket member (one would have to wait for the other).`;
    case 'hiding_not_between':
      return `${head}: the work that hides it would not lie between the merged start and wait.`;
    case 'enclosed':
      return `${head}: the merged collective would force another collective to finish before the work that hides it.`;
    case 'path_starts':
      return `${head}: a dependency path exists between the two starts.`;
    case 'path_waits':
      return `${head}: a dependency path exists between the two waits.`;
  }
}

type Detail<K extends ReasonDetail['kind']> = Extract<ReasonDetail, { kind: K }>;

function prefetchedText(d: Detail<'prefetched'>): string {
  const ahead = d.ahead === null ? 'off the compute path' : `${d.ahead} compute node(s) before its first use`;
  return (
    `${d.coll} prefetched behind ${d.behind} (${ahead}); ` +
    `${hiddenPct(d.estMs, d.exposedMs)} of its ${fmtMs(d.estMs)} hidden.`
  );
}

/** The autobucketing pass's sentences (scheduling, then bucketing); the other backends' from blockText. */
function detailText(d: ReasonDetail): string {
  switch (d.kind) {
    case 'prefetched':
      return prefetchedText(d);
    case 'refused':
      return `${refusalText(d.behind, d.refusal)} ${hiddenPct(d.estMs, d.exposedMs)} of it hidden in the end.`;
    case 'ready_queue_hidden':
      return `${d.coll} issued from the ready queue and fully hidden by the work that ran before its wait.`;
    case 'no_compute':
      return `${d.coll} not prefetched: nothing ran between its start and its wait; ${fmtMs(d.exposedMs)} exposed.`;
    case 'ready_queue':
      return (
        `${d.coll} issued from the ready queue; its wait came after only ${fmtMs(d.estMs - d.exposedMs)} of ` +
        `work, ${fmtMs(d.exposedMs)} of ${fmtMs(d.estMs)} exposed.`
      );
    case 'bucketed':
      return (
        `bucketed with ${d.members - 1} other ${d.coll}(s) into bucket ${d.bucket} (${sizeText(d.bytes)} in + ` +
        `out); one launch instead of ${d.members}.`
      );
    case 'pre_bucketed':
      return (
        `pre-bucketed with ${d.members - 1} other collective(s) before scheduling (torch 2.13's FSDP ` +
        `pre-bucketing, \`${d.merged}\`); one launch instead of ${d.members}.`
      );
    case 'not_bucketed':
      return notBucketedText(d.why, d.seed);
    default:
      return blockText(d);
  }
}

function blockBucketText(d: Detail<'block_bucket'>): string {
  const what =
    d.members > 1
      ? `one of ${d.members} ${d.coll}s merged into ${d.module}'s ${d.phase} bucket`
      : `the only ${d.coll} of ${d.module} in ${d.phase}, a bucket of one`;
  return `${what}: entry ${d.entry} of ${d.entries} of torchtitan's module bucket plan (torch's manual scheduler).`;
}

function blockPrefetchText(d: Detail<'block_prefetch_all_gather'>): string {
  return d.at === 'wait'
    ? `started before ${d.before}'s all-gather wait, so it overlaps ${d.before}'s compute (torch's manual ` +
        'scheduler prefetches the next plan entry).'
    : `started before ${d.before}, the first compute node of its graph (torch's manual scheduler).`;
}

function fsdp2BucketText(d: Detail<'fsdp2_bucket'>): string {
  const what =
    d.coll === 'all_gather'
      ? `all-gathered (${d.phase})`
      : d.coll === 'all_reduce'
        ? `all-reduced on ${d.group}`
        : 'reduce-scattered';
  return `${what} with the rest of ${d.module}: FSDP2 communicates one fully_shard module as one flat buffer.`;
}

type AutobucketingKind =
  | 'prefetched'
  | 'refused'
  | 'ready_queue_hidden'
  | 'no_compute'
  | 'ready_queue'
  | 'bucketed'
  | 'pre_bucketed'
  | 'not_bucketed';

/** The other backends' sentences: aot_eager, transformer_block, fsdp2_eager. */
function blockText(d: Exclude<ReasonDetail, { kind: AutobucketingKind }>): string {
  switch (d.kind) {
    case 'program_position':
      return `${d.coll} left at its program position; its wait follows immediately, so nothing overlaps it.`;
    case 'block_bucket':
      return blockBucketText(d);
    case 'block_prefetch_all_gather':
      return blockPrefetchText(d);
    case 'block_prefetch_reduce_scatter':
      return d.next !== null
        ? `${d.module}'s reduce-scatter bucket is waited only after ${d.next}'s is issued, so it overlaps ` +
            `${d.next}'s backward (torch's manual scheduler).`
        : `${d.module}'s reduce-scatter bucket is the last; its wait stays where the program has it.`;
    case 'fsdp2_bucket':
      return fsdp2BucketText(d);
    case 'fsdp2_prefetch_all_gather':
      return (
        `FSDP2's ${d.phase === 'forward' ? 'implicit' : 'backward'} prefetch: issued on the all-gather stream ` +
        `one module ahead of ${d.module}'s compute.`
      );
    case 'fsdp2_reduce_scatter':
      return (
        `issued after ${d.module}'s last gradient and waited one module later, in the next module's ` +
        `post-backward (FSDP2's reduce-scatter state).`
      );
  }
}

/** One sentence for people: 'not prefetched behind mm: in-flight budget full (5.20 GiB > …)'. */
export function reasonText(r: Pick<Reason, 'detail'>): string {
  return detailText(r.detail);
}

/** Reasons with their sentences, as the CLI's JSON and torch's log comparison carry them. */
/** A diff with each row's reasons as the CLI's JSON gives them: `{code, text}`. */
export function wordedDiff(d: BackendDiff) {
  return {
    ...d,
    rows: d.rows.map((r) => ({ ...r, reasons: r.reasons.map((x) => ({ code: x.code, text: reasonText(x) })) })),
  };
}
