// ScanStack: a nested scan gets its own buffers, and a scan at a depth reuses that depth's.
import { describe, expect, it } from 'vitest';
import { ScanStack } from '../../../src/backends/autobucketing/scan_buffers';

describe('ScanStack', () => {
  it('hands a nested scan other buffers and reuses them per depth', () => {
    const stack = new ScanStack(3);
    const outer = stack.enter();
    const inner = stack.enter();
    expect(inner).not.toBe(outer);
    expect(inner.cands).not.toBe(outer.cands);
    outer.cands[0] = 7;
    inner.cands[0] = 9;
    expect(outer.cands[0]).toBe(7);
    stack.leave();
    expect(stack.enter()).toBe(inner);
    stack.leave();
    stack.leave();
    expect(stack.enter()).toBe(outer);
    expect(outer.cands.length).toBe(3);
  });
});
