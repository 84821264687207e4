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
import { REFUSAL_CODE, Timeline, type RefusalKind } from './timeline';

export interface BucketOutcome {
  /** Buckets (collective numbers in issue order), at least two members each. */
  readonly buckets: readonly (readonly number[])[];
  /** Final order: slots holding set representatives (node numbers) or -1. */
  readonly slots: Int32Array;
  /** Representative node → bucket index, for merged starts and merged waits. */
  readonly startSetOf: ReadonlyMap<number, number>;
  readonly waitSetOf: ReadonlyMap<number, number>;
  /** Last reason each collective was not added to a bucket (collective numbers). */
  readonly why: ReadonlyMap<number, BucketWhy>;
}

/** `seed`: the bucket's first collective; `other`: a conflicting member (collective) or hiding node (node), else -1. */
export interface BucketWhy {
  code: ReasonCode;
  detail: 'nyi_hiding' | 'byte_cap' | 'ancestor' | RefusalKind;
  seed: number;
  other: number;
}

/**
 * Static reachability over start/wait nodes (graph edges + hiding edges): is target x an ancestor
 * of node y? Targets get bits in schedule order, 32 per chunk; one pass per chunk walks the order
 * from the chunk's first target (nothing earlier can descend from it) keeping one word per node.
 * ~half the work of full n × ⌈2C/32⌉ rows, and a cache-sized working set per pass.
 */
class AncestorBits {
  private readonly bit: Int32Array;
  private readonly pos: Int32Array;
  private readonly chunkStart: Int32Array;
  private readonly chunkOff: Int32Array;
  private readonly rows: Int32Array;

  constructor(ix: GraphIndex, hidingPreds: ReadonlyMap<number, readonly number[]>, order: ArrayLike<number>, pos: Int32Array, targets: readonly number[]) {
    const n = order.length;
    const bit = new Int32Array(ix.n).fill(-1);
    const sorted = Int32Array.from(targets).sort((a, b) => pos[a] - pos[b]);
    for (let i = 0; i < sorted.length; i++) bit[sorted[i]] = i;
    // predecessors by position: positions of preds and their bits (graph edges, then hiding edges)
    const { predOff, predIdx } = ix;
    const off = new Int32Array(n + 1);
    for (let p = 0; p < n; p++) {
      const y = order[p];
      off[p + 1] = off[p] + predOff[y + 1] - predOff[y] + (hidingPreds.get(y)?.length ?? 0);
    }
    const pp = new Int32Array(off[n]);
    const pb = new Int32Array(off[n]);
    for (let p = 0; p < n; p++) {
      const y = order[p];
      let e = off[p];
      for (let k = predOff[y]; k < predOff[y + 1]; k++, e++) (pp[e] = pos[predIdx[k]]), (pb[e] = bit[predIdx[k]]);
      for (const x of hidingPreds.get(y) ?? []) (pp[e] = pos[x]), (pb[e] = bit[x]), e++;
    }
    const chunks = Math.ceil(sorted.length / 32);
    const chunkStart = new Int32Array(chunks);
    const chunkOff = new Int32Array(chunks + 1);
    for (let k = 0; k < chunks; k++) {
      chunkStart[k] = pos[sorted[32 * k]];
      chunkOff[k + 1] = chunkOff[k] + n - chunkStart[k];
    }
    const rows = new Int32Array(chunkOff[chunks]);
    for (let k = 0; k < chunks; k++) {
      const start = chunkStart[k];
      const base = chunkOff[k] - start;
      for (let p = start; p < n; p++) {
        let v = 0;
        for (let e = off[p]; e < off[p + 1]; e++) {
          const px = pp[e];
          if (px < start) continue;
          v |= rows[base + px];
          const b = pb[e];
          if (b >>> 5 === k) v |= 1 << (b & 31);
        }
        rows[base + p] = v;
      }
    }
    this.bit = bit;
    this.pos = pos;
    this.chunkStart = chunkStart;
    this.chunkOff = chunkOff;
    this.rows = rows;
  }

  /** Is x (a start or wait) an ancestor of y? */
  has(x: number, y: number): boolean {
    const b = this.bit[x];
    if (b < 0) return false;
    const k = b >>> 5;
    const py = this.pos[y];
    const start = this.chunkStart[k];
    return py >= start && (this.rows[this.chunkOff[k] + py - start] & (1 << (b & 31))) !== 0;
  }
}

const MAX_CONSECUTIVE_FAILURES = 20; // torch's greedy cut-off, also its graph-distance limit when exposed-first

export function bucketCollectives(ix: GraphIndex, sched: ScheduleResult, opts: AutobucketingOptions): BucketOutcome {
  const { colls, order } = sched;
  const pos = new Int32Array(ix.n);
  order.forEach((node, p) => (pos[node] = p));
  // static edges: graph edges + hiding edges (start → hiding compute → wait) of fully hidden collectives
  const aug = new AugmentedGraph(ix.predOff, ix.predIdx, ix.succOff, ix.succIdx, order);
  const hidingPreds = new Map<number, number[]>();
  const addHidingEdge = (to: number, from: number) => {
    const list = hidingPreds.get(to);
    if (list) list.push(from);
    else hidingPreds.set(to, [from]);
    aug.addExtraDep(to, from);
  };
  const allHiding = new Set<number>();
  for (const info of colls) {
    if (info.exposedUs !== 0) continue;
    for (const hn of info.hiding) {
      addHidingEdge(hn, info.start);
      addHidingEdge(info.wait, hn);
      allHiding.add(hn);
    }
  }
  const targets: number[] = [];
  for (const c of colls) targets.push(c.start, c.wait);
  const anc = new AncestorBits(ix, hidingPreds, order, pos, targets);
  const why = new Map<number, BucketWhy>();
  const note = (c: number, code: ReasonCode, detail: BucketWhy['detail'], seed: number, other: number) => {
    const w = why.get(c);
    if (w === undefined) why.set(c, { code, detail, seed, other });
    else {
      w.code = code;
      w.detail = detail;
      w.seed = seed;
      w.other = other;
    }
  };
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
      const processed = new Uint8Array(colls.length);
      for (let i = 0; i < sorted.length; i++) {
        const seed = sorted[i];
        if (processed[seed]) continue;
        if (allHiding.has(colls[seed].start) || allHiding.has(colls[seed].wait)) {
          note(seed, 'not_bucketed_would_expose', 'nyi_hiding', seed, -1);
          continue;
        }
        const bucket = [seed];
        let total = colls[seed].sizeBytes;
        processed[seed] = 1;
        let failures = 0;
        const end = Math.min(sorted.length, i + 1 + opts.max_coll_distance);
        for (let j = i + 1; j < end; j++) {
          const cand = sorted[j];
          const bytes = colls[cand].sizeBytes;
          if (total + bytes > maxBucketBytes) {
            if (!processed[cand]) note(cand, 'not_bucketed_byte_cap', 'byte_cap', seed, -1);
            break;
          }
          if (processed[cand]) continue;
          if (opts.bucket_exposed_first && Math.abs(pos[colls[cand].start] - pos[colls[seed].start]) > MAX_CONSECUTIVE_FAILURES) continue;
          let ok = false;
          if (allHiding.has(colls[cand].start) || allHiding.has(colls[cand].wait)) {
            note(cand, 'not_bucketed_would_expose', 'nyi_hiding', seed, -1);
          } else {
            const conflict = hasAncestorConflicts(bucket, cand);
            if (conflict >= 0) {
              note(cand, 'not_bucketed_path_between_starts', 'ancestor', seed, conflict);
            } else {
              const fail = tl.tryAdd(bucket, cand);
              if (fail === null) ok = true;
              else note(cand, REFUSAL_CODE[fail.kind], fail.kind, seed, fail.node);
            }
          }
          if (ok) {
            bucket.push(cand);
            total += bytes;
            processed[cand] = 1;
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
