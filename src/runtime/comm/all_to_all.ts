// All-to-all with split sizes (torch's all_to_all_single) over the data SAB, direct: rank q writes
// its whole input into its region [q·n·M, (q+1)·n·M) and its send / receive sizes into its split
// slot (control SAB, by seq parity, like the descriptors) before the collective's one barrier; after
// it, every rank checks every pair (rank i's send to j = rank j's receive from i) and reads its part
// of each region at the offset the sender's sizes give. Copies only: the output is exact.

import type { DataView32 } from './direct';
import { DESC_SLOTS, splitWords, type ControlLayout } from './layout';

/** Index of `rank`'s split slot for `seq` in the control words. */
const splitSlot = (layout: ControlLayout, rank: number, seq: number): number =>
  layout.splitBase + (rank * DESC_SLOTS + (seq & 1)) * splitWords(layout.worldSize);

/** Before the barrier: this rank's send sizes then receive sizes (plain stores; the barrier publishes them). */
export function writeSplits(
  words: Int32Array,
  layout: ControlLayout,
  rank: number,
  seq: number,
  sendSplits: readonly number[],
  recvSplits: readonly number[],
): void {
  const at = splitSlot(layout, rank, seq);
  const n = layout.worldSize;
  for (let j = 0; j < n; j++) {
    words[at + j] = sendSplits[j];
    words[at + n + j] = recvSplits[j];
  }
}

/** Elements rank `from` sends to rank `to` at `seq`, as `from` published them. */
const sentBy = (words: Int32Array, layout: ControlLayout, from: number, to: number, seq: number): number =>
  words[splitSlot(layout, from, seq) + to];

/** Elements rank `to` expects from rank `from` at `seq`, as `to` published them. */
const expectedBy = (words: Int32Array, layout: ControlLayout, to: number, from: number, seq: number): number =>
  words[splitSlot(layout, to, seq) + layout.worldSize + from];

export interface SplitMismatch {
  readonly from: number;
  readonly to: number;
  readonly sends: number;
  readonly expects: number;
}

/**
 * The first pair (by sender, then receiver) whose sizes disagree, or undefined. Every rank reads the
 * same table, so every rank finds the same pair and throws the same message.
 */
export function firstSplitMismatch(words: Int32Array, layout: ControlLayout, seq: number): SplitMismatch | undefined {
  const n = layout.worldSize;
  for (let from = 0; from < n; from++) {
    for (let to = 0; to < n; to++) {
      const sends = sentBy(words, layout, from, to, seq);
      const expects = expectedBy(words, layout, to, from, seq);
      if (sends !== expects) return { from, to, sends, expects };
    }
  }
  return undefined;
}

/** Before the barrier: publish this rank's whole input in its region. */
export function directAllToAllWrite(v: DataView32, rank: number, input: Float32Array): void {
  v.data.set(input, rank * v.regionElems);
}

/**
 * After the barrier (sizes agreed): the part each rank q sent here, at the offset q's earlier sends
 * take in its region; this rank's own part straight from its input.
 */
export function directAllToAllRead(
  v: DataView32,
  words: Int32Array,
  layout: ControlLayout,
  rank: number,
  seq: number,
  input: Float32Array,
  output: Float32Array,
): void {
  const n = layout.worldSize;
  let out = 0;
  for (let q = 0; q < n; q++) {
    let offset = 0;
    for (let j = 0; j < rank; j++) offset += sentBy(words, layout, q, j, seq);
    const count = sentBy(words, layout, q, rank, seq);
    const from =
      q === rank
        ? input.subarray(offset, offset + count)
        : v.data.subarray(q * v.regionElems + offset, q * v.regionElems + offset + count);
    output.set(from, out);
    out += count;
  }
}

/** What is wrong with one rank's split sizes (`field`: sendSplits / recvSplits), or undefined. */
export function splitsProblem(
  field: string,
  splits: readonly number[],
  worldSize: number,
  bufferElems: number,
  buffer: string,
): string | undefined {
  if (splits.length !== worldSize) return `${field} must list ${worldSize} sizes (one per rank), got ${splits.length}`;
  const bad = splits.findIndex((s) => !Number.isInteger(s) || s < 0);
  if (bad >= 0) return `${field}[${bad}] must be an integer ≥ 0 (elements), got ${JSON.stringify(splits[bad])}`;
  const total = splits.reduce((a, b) => a + b, 0);
  if (total !== bufferElems) return `${field} add up to ${total} elems, but ${buffer} has ${bufferElems}`;
  return undefined;
}

/** The mismatch error's words: which rank sends what to whom, and what the receiver expected. */
export function splitMismatchText(m: SplitMismatch, name: (r: number) => number): string {
  return (
    `rank ${name(m.from)} sends ${m.sends} elems to rank ${name(m.to)}, which expects ${m.expects} ` +
    `from rank ${name(m.from)}`
  );
}
