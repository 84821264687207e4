// Collective descriptors: what each rank publishes in the control buffer before a collective
// (seq, kind, elems, tensor-list hash, tensor-list text) and how two of them are compared and
// printed in a mismatch error, e.g. `rank 0 all_gather(4096 elems, [layers.0.attention.wq.weight])`.

import { fnv1a } from '../../util';
import { DESC_SLOTS, DESC_TEXT_BYTES, DESC_WORDS, type ControlLayout } from './layout';
import type { CollectiveDescriptor, CommOpKind } from './comm_types';

const KIND_CODES: readonly CommOpKind[] = ['all_gather', 'reduce_scatter', 'barrier', 'all_to_all'];

/** FNV-1a 32-bit over the UTF-16 code units of the names joined by '\n' (order matters). */
export function hashTensorNames(names: readonly string[]): number {
  return fnv1a(names.join('\n')) | 0; // stored in an Int32 word
}

/** Characters of the caller's label kept in the slot. */
const LABEL_CHARS = 64;
/** UTF-8 bytes left for the tensor list: the slot minus the label (≤ 3 bytes a UTF-16 unit) and a separator. */
const TENSORS_TEXT_BYTES = DESC_TEXT_BYTES - 3 * LABEL_CHARS - 1;
const SEP = '\u0000';

/** `[a, b, c]`, cut to fit its part of the slot once UTF-8 encoded, the cut marked with '…'. */
export function tensorListText(names: readonly string[]): string {
  const full = `[${names.join(', ')}]`;
  const enc = new TextEncoder();
  if (enc.encode(full).length <= TENSORS_TEXT_BYTES) return full;
  let cut = full.slice(0, TENSORS_TEXT_BYTES - 8);
  while (enc.encode(`${cut}…]`).length > TENSORS_TEXT_BYTES) cut = cut.slice(0, -16);
  return `${cut}…]`;
}

export function makeDescriptor(
  seq: number,
  kind: CommOpKind,
  elems: number,
  names: readonly string[],
  label: string,
): CollectiveDescriptor {
  const cutLabel = label.slice(0, LABEL_CHARS).replaceAll(SEP, ' ');
  return { seq, kind, elems, tensorsHash: hashTensorNames(names), label: cutLabel, tensorsText: tensorListText(names) };
}

function sameDescriptor(a: CollectiveDescriptor, b: CollectiveDescriptor): boolean {
  return a.seq === b.seq && a.kind === b.kind && a.elems === b.elems && a.tensorsHash === b.tensorsHash;
}

/** `all_gather(4096 elems, [wq, wk])`; `barrier([label])`; `all_to_all([x])` (its sizes differ per rank). */
export function formatDescriptor(d: CollectiveDescriptor): string {
  if (d.kind === 'barrier' || d.kind === 'all_to_all') return `${d.kind}(${d.tensorsText})`;
  return `${d.kind}(${d.elems} elems, ${d.tensorsText})`;
}

/** Slot index of `rank`'s descriptor for `seq` (two per rank, by seq parity; see DESC_SLOTS). */
const slotOf = (rank: number, seq: number): number => rank * DESC_SLOTS + (seq & 1);

/** The slot text of `d` (label, separator, tensor list), UTF-8, cut to DESC_TEXT_BYTES. */
export function encodeDescriptorText(d: CollectiveDescriptor): Uint8Array {
  return new TextEncoder().encode(`${d.label}${SEP}${d.tensorsText}`).subarray(0, DESC_TEXT_BYTES);
}

/**
 * Writes `d` into `rank`'s slot for d.seq (`text`: encodeDescriptorText(d), when the caller cached it).
 * Plain stores: the barrier that follows (seq-cst Atomics) publishes them.
 */
export function writeDescriptor(
  words: Int32Array,
  bytes: Uint8Array,
  layout: ControlLayout,
  rank: number,
  d: CollectiveDescriptor,
  text: Uint8Array = encodeDescriptorText(d),
): void {
  const slot = slotOf(rank, d.seq);
  const w = layout.descBase + slot * DESC_WORDS;
  bytes.set(text, layout.descTextByte + slot * DESC_TEXT_BYTES);
  words[w] = d.seq;
  words[w + 1] = KIND_CODES.indexOf(d.kind);
  words[w + 2] = d.elems;
  words[w + 3] = d.tensorsHash;
  words[w + 4] = text.length;
}

/** `rank`'s descriptor in the slot for `seq` (what it published for seq, or for seq ± 2 if it is off by two). */
export function readDescriptor(
  words: Int32Array,
  bytes: Uint8Array,
  layout: ControlLayout,
  rank: number,
  seq: number,
): CollectiveDescriptor {
  const slot = slotOf(rank, seq);
  const w = layout.descBase + slot * DESC_WORDS;
  const start = layout.descTextByte + slot * DESC_TEXT_BYTES;
  // TextDecoder refuses SAB-backed views: copy out first.
  const text = new TextDecoder().decode(bytes.slice(start, start + words[w + 4]));
  const sep = text.indexOf(SEP);
  const kind = KIND_CODES[words[w + 1]] ?? ('barrier' as const);
  return {
    seq: words[w],
    kind,
    elems: words[w + 2],
    tensorsHash: words[w + 3],
    label: text.slice(0, Math.max(0, sep)),
    tensorsText: text.slice(sep + 1),
  };
}

/**
 * True when every rank's words in the slot for `seq` (seq, kind, elems, hash) equal `rank`'s own: the
 * per-collective check, without decoding any text (done only to word a mismatch).
 */
export function slotsAgree(words: Int32Array, layout: ControlLayout, worldSize: number, seq: number): boolean {
  const at0 = layout.descBase + slotOf(0, seq) * DESC_WORDS;
  for (let r = 1; r < worldSize; r++) {
    const at = layout.descBase + slotOf(r, seq) * DESC_WORDS;
    for (let k = 0; k < 4; k++) if (words[at + k] !== words[at0 + k]) return false;
  }
  return true;
}

/**
 * Lowest rank whose descriptor differs from rank 0's (every rank computes the same answer, so every
 * rank throws the same message), or -1 when all agree.
 */
export function firstMismatch(all: readonly CollectiveDescriptor[]): number {
  for (let r = 1; r < all.length; r++) if (!sameDescriptor(all[0], all[r])) return r;
  return -1;
}
