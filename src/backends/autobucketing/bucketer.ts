// Overlap-preserving bucketer: a TypeScript port of torch 2.11's OverlapPreservingBucketer.
// Upstream: https://github.com/pytorch/pytorch/blob/main/torch/_inductor/fx_passes/overlap_preserving_bucketer.py
// Per process group, collectives with the same key (all-gather: group+dtype; reduce-scatter:
// group+op+dtype) are merged greedily up to the byte cap, least-hidden first when
// bucket_exposed_first. A candidate joins only when (1) no dependency path links it to a member
// (static ancestors, including the hiding edges start → hiding compute → wait), (2) one of four
// placements of the merged start / wait keeps every hiding compute between them and encloses no
// other collective's hiding interval on the group's timeline (NCCL's one-stream-per-group order),
// and (3) merging creates no cycle in the augmented graph.

import type { GraphIndex } from '../graph_index';
import { bucketKey } from '../rewrite';
import type { ReasonCode } from '../types';
import { AugmentedGraph } from './aug_graph';
import { gbToBytes, type AutobucketingOptions } from './options';
import type { ScheduleResult } from './scheduler';
import { Timeline } from './timeline';

export interface BucketOutcome {
  /** Buckets (collective numbers in issue order), at least two members each. */
  readonly buckets: readonly (readonly number[])[];
  /** Final order: slots holding set representatives (node numbers) or -1. */
  readonly slots: Int32Array;
  /** Representative node → bucket index, for merged starts and merged waits. */
  readonly startSetOf: ReadonlyMap<number, number>;
  readonly waitSetOf: ReadonlyMap<number, number>;
  readonly why: ReadonlyMap<number, { code: ReasonCode; text: string }>;
}

/** Static reachability over start/wait nodes: bit r(x) of row y is set when x is an ancestor of y. */
class AncestorBits {
  private readonly words: number;
  private readonly rows: Uint32Array;
  private readonly bit: Int32Array;

  constructor(n: number, preds: readonly (readonly number[])[], order: ArrayLike<number>, targets: readonly number[]) {
    this.bit = new Int32Array(n).fill(-1);
    targets.forEach((t, i) => (this.bit[t] = i));
    this.words = Math.max(1, Math.ceil(targets.length / 32));
    const W = this.words;
    this.rows = new Uint32Array(n * W);
    for (let p = 0; p < order.length; p++) {
      const y = order[p];
      const row = y * W;
      for (const x of preds[y]) {
        const src = x * W;
        for (let w = 0; w < W; w++) this.rows[row + w] |= this.rows[src + w];
        const b = this.bit[x];
        if (b >= 0) this.rows[row + (b >>> 5)] |= 1 << (b & 31);
      }
    }
  }

  /** Is x (a start or wait) an ancestor of y? */
  has(x: number, y: number): boolean {
    const b = this.bit[x];
    return b >= 0 && (this.rows[y * this.words + (b >>> 5)] & (1 << (b & 31))) !== 0;
  }
}

const MAX_CONSECUTIVE_FAILURES = 20; // torch's greedy cut-off, also its graph-distance limit when exposed-first

export function bucketCollectives(ix: GraphIndex, sched: ScheduleResult, opts: AutobucketingOptions): BucketOutcome {
  const n = ix.n;
  const { colls, order } = sched;
  const pos = new Int32Array(n);
  order.forEach((node, p) => (pos[node] = p));
  // static edges: graph edges + hiding edges of fully hidden collectives
  const preds: number[][] = Array.from({ length: n }, (_, i) => Array.from(ix.predIdx.subarray(ix.predOff[i], ix.predOff[i + 1])));
  const allHiding = new Set<number>();
  for (const info of colls) {
    if (info.exposedUs !== 0) continue;
    for (const hn of info.hiding) {
      preds[hn].push(info.start);
      preds[info.wait].push(hn);
      allHiding.add(hn);
    }
  }
  const succs: number[][] = Array.from({ length: n }, () => []);
  for (let i = 0; i < n; i++) for (const p of preds[i]) succs[p].push(i);
  const anc = new AncestorBits(n, preds, order, colls.flatMap((c) => [c.start, c.wait]));
  const aug = new AugmentedGraph(preds, succs, order);
  const why = new Map<number, { code: ReasonCode; text: string }>();
  const name = (c: number) => ix.nodes[colls[c].start].name;
  const maxBucketBytes = gbToBytes(opts.max_bucket_memory_gb);
  const buckets: number[][] = [];

  const overlapRatio = (c: number) => (colls[c].estUs <= 0 ? 0 : (colls[c].estUs - colls[c].exposedUs) / colls[c].estUs);

  const hasAncestorConflicts = (bucket: readonly number[], cand: number): number => {
    const cw = colls[cand].wait;
    const cs = colls[cand].start;
    for (const m of bucket) {
      const ms = colls[m].start;
      const mw = colls[m].wait;
      if (anc.has(ms, cs) || anc.has(cs, ms) || anc.has(mw, cw) || anc.has(cw, mw)) return m;
      for (const hn of colls[m].hiding) if (anc.has(cw, hn)) return m;
      for (const hn of colls[cand].hiding) if (anc.has(mw, hn)) return m;
    }
    return -1;
  };

  const groupsWithAllGather = new Set(colls.filter((c) => ix.nodes[c.start].kind === 'all_gather').map((c) => c.group));
  for (let g = 0; g < sched.groups.length; g++) {
    if (!groupsWithAllGather.has(g)) continue; // torch buckets FSDP groups only
    const tl = new Timeline(ix, sched, g, aug);
    const byKey = new Map<string, number[]>();
    colls.forEach((info, c) => {
      if (info.group !== g) return;
      const key = bucketKey(ix.nodes[info.start]);
      const list = byKey.get(key);
      if (list) list.push(c);
      else byKey.set(key, [c]);
    });
    for (const group of byKey.values()) {
      const sorted = opts.bucket_exposed_first
        ? [...group].sort((a, b) => overlapRatio(a) - overlapRatio(b) || pos[colls[a].start] - pos[colls[b].start])
        : [...group].sort((a, b) => pos[colls[a].start] - pos[colls[b].start]);
      const processed = new Set<number>();
      for (let i = 0; i < sorted.length; i++) {
        const seed = sorted[i];
        if (processed.has(seed)) continue;
        if (allHiding.has(colls[seed].start) || allHiding.has(colls[seed].wait)) {
          why.set(seed, { code: 'not_bucketed_would_expose', text: 'not bucketed: its start or wait hides another collective (torch: nyi).' });
          continue;
        }
        const bucket = [seed];
        let total = colls[seed].sizeBytes;
        processed.add(seed);
        let failures = 0;
        const end = Math.min(sorted.length, i + 1 + opts.max_coll_distance);
        for (let j = i + 1; j < end; j++) {
          const cand = sorted[j];
          const bytes = colls[cand].sizeBytes;
          if (total + bytes > maxBucketBytes) {
            if (!processed.has(cand)) {
              why.set(cand, { code: 'not_bucketed_byte_cap', text: `not bucketed with ${name(seed)}: the bucket would exceed max_bucket_memory_gb (${opts.max_bucket_memory_gb} GB).` });
            }
            break;
          }
          if (processed.has(cand)) continue;
          if (opts.bucket_exposed_first && Math.abs(pos[colls[cand].start] - pos[colls[seed].start]) > MAX_CONSECUTIVE_FAILURES) continue;
          let ok = false;
          if (allHiding.has(colls[cand].start) || allHiding.has(colls[cand].wait)) {
            why.set(cand, { code: 'not_bucketed_would_expose', text: 'not bucketed: its start or wait hides another collective (torch: nyi).' });
          } else {
            const conflict = hasAncestorConflicts(bucket, cand);
            if (conflict >= 0) {
              why.set(cand, { code: 'not_bucketed_path_between_starts', text: `not bucketed with ${name(seed)}: a dependency path links it to bucket member ${name(conflict)}.` });
            } else {
              const fail = tl.tryAdd(bucket, cand);
              if (fail === null) ok = true;
              else why.set(cand, { code: fail.code, text: `not bucketed with ${name(seed)}: ${fail.text}` });
            }
          }
          if (ok) {
            bucket.push(cand);
            total += bytes;
            processed.add(cand);
            failures = 0;
          } else if (++failures >= MAX_CONSECUTIVE_FAILURES) break;
        }
        if (bucket.length > 1) buckets.push(bucket.sort((a, b) => pos[colls[a].start] - pos[colls[b].start]));
      }
    }
  }
  const startSetOf = new Map<number, number>();
  const waitSetOf = new Map<number, number>();
  buckets.forEach((b, bi) => {
    startSetOf.set(aug.find(colls[b[0]].start), bi);
    waitSetOf.set(aug.find(colls[b[0]].wait), bi);
  });
  return { buckets, slots: aug.slots, startSetOf, waitSetOf, why };
}
