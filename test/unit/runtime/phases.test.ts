// The step breakdown's clock: nested spans count each millisecond once, add() hands a wait to its
// phase, and the report's mean skips the warm-up step.
import { describe, expect, it } from 'vitest';
import { PhaseClock, formatPhases, phaseReport, type StepPhases } from '../../../src/runtime/exec';
import { PHASES } from '../../../src/runtime/exec/phases';

function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    /* spin: a real, measurable interval */
  }
}

const row = (over: Partial<StepPhases>): StepPhases => ({
  stepMs: 0,
  compute: 0,
  collective: 0,
  barrier: 0,
  readback: 0,
  upload: 0,
  compile: 0,
  other: 0,
  ...over,
});

describe('PhaseClock', () => {
  it('gives a nested span its own time and the enclosing span only the rest', () => {
    const c = new PhaseClock(true);
    c.span('collective', 'ag', () => {
      busy(4);
      c.span('readback', 'shard', () => busy(6));
    });
    const p = c.result();
    expect(p.readback).toBeGreaterThanOrEqual(6);
    expect(p.collective).toBeGreaterThanOrEqual(4);
    // The collective's interval spans the readback; its phase holds only the rest.
    const ag = c.intervals?.find((i) => i.name === 'ag');
    expect(p.collective + p.readback).toBeCloseTo(ag?.durMs ?? NaN, 9);
    const covered = PHASES.reduce((a, k) => a + p[k], 0);
    expect(covered + p.other).toBeCloseTo(p.stepMs, 9);
    expect(c.intervals?.map((i) => [i.phase, i.name])).toEqual([
      ['readback', 'shard'],
      ['collective', 'ag'],
    ]);
  });

  it('hands a wait reported by add() to its phase and takes it out of the enclosing span', async () => {
    const c = new PhaseClock(true);
    await c.spanAsync('collective', 'rs', async () => {
      const t = performance.now();
      busy(5);
      c.add('barrier', performance.now() - t, 'barrier');
    });
    const p = c.result();
    expect(p.barrier).toBeGreaterThanOrEqual(5);
    // the span's interval holds both; its phase only what the wait left (no wall-time bound)
    const rs = c.intervals?.find((i) => i.name === 'rs');
    expect(p.collective + p.barrier).toBeCloseTo(rs?.durMs ?? NaN, 9);
    const wait = c.intervals?.find((i) => i.phase === 'barrier');
    expect(wait?.startMs).toBeGreaterThanOrEqual(0);
    expect(c.intervals?.length).toBe(2);
  });

  it('keeps no intervals unless asked, and counts time outside every span as other', () => {
    const c = new PhaseClock();
    busy(3);
    const p = c.result();
    expect(c.intervals).toBeUndefined();
    expect(p.other).toBeGreaterThanOrEqual(3);
    expect(p.other).toBeCloseTo(p.stepMs, 9);
  });
});

describe('phaseReport', () => {
  it('averages every rank of the steps after the first and rounds to µs', () => {
    const rep = phaseReport([
      [row({ stepMs: 100, compile: 90, compute: 10 }), row({ stepMs: 100, compile: 90, compute: 10 })],
      [row({ stepMs: 10, compute: 6, barrier: 4 }), row({ stepMs: 12, compute: 8.0004, barrier: 4 })],
    ]);
    expect(rep.mean).toMatchObject({ stepMs: 11, compute: 7, barrier: 4, compile: 0 });
    expect(rep.perStep[1][1].compute).toBe(8);
    expect(phaseReport([[row({ stepMs: 5, compute: 5 })]]).mean.compute).toBe(5); // one step: it is the mean
    expect(formatPhases(rep.mean)).toBe(
      'step 11.00 ms = compute 7.00 + collective 0.00 + barrier 4.00 + readback 0.00 + upload 0.00 + compile 0.00 + other 0.00',
    );
  });
});
