// Descriptor hashing, formatting, slot round-trip and mismatch search (pure, no workers).

import { describe, expect, it } from 'vitest';
import {
  firstMismatch,
  formatDescriptor,
  hashTensorNames,
  makeDescriptor,
  readDescriptor,
  tensorListText,
  writeDescriptor,
} from '../../../src/runtime/comm/descriptor';
import { DESC_TEXT_BYTES, controlLayout } from '../../../src/runtime/comm/layout';

describe('hashTensorNames', () => {
  it('matches FNV-1a 32 of the names joined by newlines', () => {
    // FNV-1a 32 of "a" is 0xe40c292c (published test vector); of "" the offset basis 0x811c9dc5.
    expect(hashTensorNames(['a']) >>> 0).toBe(0xe40c292c);
    expect(hashTensorNames([]) >>> 0).toBe(0x811c9dc5);
  });

  it('depends on order and on where names split', () => {
    expect(hashTensorNames(['wq', 'wk'])).not.toBe(hashTensorNames(['wk', 'wq']));
    expect(hashTensorNames(['ab', 'c'])).not.toBe(hashTensorNames(['a', 'bc']));
  });
});

describe('formatDescriptor', () => {
  it('prints kind, elems and tensor list like the mismatch error does', () => {
    expect(
      formatDescriptor(makeDescriptor(12, 'all_gather', 4096, ['layers.0.attention.wq.weight'], 'ag.bucket0')),
    ).toBe('all_gather(4096 elems, [layers.0.attention.wq.weight])');
    expect(formatDescriptor(makeDescriptor(3, 'barrier', 0, ['step end'], 'step end'))).toBe('barrier([step end])');
  });
});

describe('tensorListText', () => {
  it('cuts long lists to the slot size and marks the cut', () => {
    const names = Array.from({ length: 200 }, (_, i) => `layers.${i}.attention.wq.weight`);
    const text = tensorListText(names);
    expect(new TextEncoder().encode(text).length).toBeLessThan(DESC_TEXT_BYTES);
    expect(text.startsWith('[layers.0.attention.wq.weight, layers.1.')).toBe(true);
    expect(text.endsWith('…]')).toBe(true);
    // Label and list together still fit one slot, so a round-trip keeps both.
    const layout = controlLayout(1);
    const sab = new SharedArrayBuffer(layout.bytes);
    const d = makeDescriptor(0, 'all_gather', 8, names, '✓'.repeat(100));
    writeDescriptor(new Int32Array(sab), new Uint8Array(sab), layout, 0, d);
    expect(readDescriptor(new Int32Array(sab), new Uint8Array(sab), layout, 0, 0)).toEqual(d);
  });
});

describe('writeDescriptor / readDescriptor', () => {
  it('round-trips through the control buffer, one slot per rank and seq parity', () => {
    const layout = controlLayout(4);
    const sab = new SharedArrayBuffer(layout.bytes);
    const words = new Int32Array(sab);
    const bytes = new Uint8Array(sab);
    const d5 = makeDescriptor(5, 'reduce_scatter', 8192, ['wq', 'wk', 'wv'], 'rs.bucket3');
    const d6 = makeDescriptor(6, 'all_gather', 64, ['norm.weight'], 'ag norm ✓');
    const other = makeDescriptor(5, 'all_gather', 1, ['x'], '');
    writeDescriptor(words, bytes, layout, 2, d5);
    writeDescriptor(words, bytes, layout, 2, d6); // next seq: the other slot, d5 survives
    writeDescriptor(words, bytes, layout, 3, other);
    expect(readDescriptor(words, bytes, layout, 2, 5)).toEqual(d5);
    expect(readDescriptor(words, bytes, layout, 2, 6)).toEqual(d6);
    expect(readDescriptor(words, bytes, layout, 3, 5)).toEqual(other);
  });
});

describe('firstMismatch', () => {
  const a = makeDescriptor(1, 'all_gather', 10, ['w'], 'a');
  it('returns -1 when every rank agrees, whatever the labels', () => {
    expect(firstMismatch([a, { ...a }, { ...a, label: 'shown only' }])).toBe(-1);
  });
  it('returns the lowest rank that disagrees with rank 0 on seq, kind, elems or tensor hash', () => {
    expect(firstMismatch([a, a, { ...a, elems: 11 }, { ...a, seq: 2 }])).toBe(2);
    expect(firstMismatch([a, { ...a, kind: 'reduce_scatter' }])).toBe(1);
    expect(firstMismatch([a, a, a, makeDescriptor(1, 'all_gather', 10, ['v'], 'a')])).toBe(3);
  });
});
