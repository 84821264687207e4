import { describe, expect, it } from 'vitest';
import { WalkMemory } from '../../../src/backends/autobucketing/walk_memory';

// nodes 0..9; waits are the even nodes
const isWait = (x: number) => x % 2 === 0;

describe('WalkMemory', () => {
  it('keeps a walk until a node it passed is scheduled, and its passed waits', () => {
    const m = new WalkMemory(10);
    m.record(9, [3, 4, 5, 7], isWait);
    expect(m.blockerOf(9)).toBe(7);
    expect([...m.waitsOf(9)]).toEqual([4]);
    m.passedNodeGone(7); // the blocker is not a passed node: the replay itself asks about it
    expect(m.blockerOf(9)).toBe(7);
    m.passedNodeGone(5);
    expect(m.blockerOf(9)).toBe(-1);
    expect(m.waitsOf(9).length).toBe(0);
  });

  it('forgets a walk through a node that begins a scan, and keeps none through a scan in progress', () => {
    const m = new WalkMemory(10);
    m.record(9, [3, 7], isWait);
    m.enterScan(3);
    expect(m.blockerOf(9)).toBe(-1);
    m.record(8, [3, 1, 5], isWait); // passes 3, the overlap node of the scan in progress
    expect(m.blockerOf(8)).toBe(-1);
    m.leaveScan(3);
    m.record(8, [3, 1, 5], isWait);
    expect(m.blockerOf(8)).toBe(5);
  });

  it('a re-recorded walk is not forgotten through the nodes of the walk it replaced', () => {
    const m = new WalkMemory(10);
    m.record(9, [1, 7], isWait);
    m.record(9, [3, 7], isWait);
    m.passedNodeGone(1);
    expect(m.blockerOf(9)).toBe(7);
    m.passedNodeGone(3);
    expect(m.blockerOf(9)).toBe(-1);
  });
});
