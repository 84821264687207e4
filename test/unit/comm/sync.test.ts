// ControlSync's spin policy: the ceiling drops to the minimum only when the runtime reports fewer
// cores than ranks (time-sharing ranks must not spin on each other's core); with the run's threads
// and cores known, the budget is fixed: long for ranks with a core each, minimal for time-sharing.

import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  SPIN_DEDICATED_US,
  SPIN_MAX_US,
  SPIN_MIN_US,
  fixedSpinUs,
  spinCeilingUs,
} from '../../../src/runtime/comm/sync';
import { createCommInit } from '../../../src/runtime/comm';

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('spinCeilingUs', () => {
  it('keeps the full ceiling when the runtime does not report its cores (Node 20)', () => {
    vi.stubGlobal('navigator', undefined);
    expect(spinCeilingUs(8)).toBe(SPIN_MAX_US);
  });

  it('drops to the minimum when ranks outnumber the reported cores', () => {
    vi.stubGlobal('navigator', { hardwareConcurrency: 2 });
    expect(spinCeilingUs(8)).toBe(SPIN_MIN_US);
    expect(spinCeilingUs(4)).toBe(SPIN_MIN_US);
  });

  it('keeps the full ceiling when every rank can have its own core', () => {
    vi.stubGlobal('navigator', { hardwareConcurrency: 2 });
    expect(spinCeilingUs(2)).toBe(SPIN_MAX_US);
    vi.stubGlobal('navigator', { hardwareConcurrency: 16 });
    expect(spinCeilingUs(8)).toBe(SPIN_MAX_US);
  });
});

describe('fixedSpinUs', () => {
  it('spins long when every rank thread of the run has a core, minimally when they time-share', () => {
    expect(fixedSpinUs(2, 2)).toBe(SPIN_DEDICATED_US);
    expect(fixedSpinUs(8, 16)).toBe(SPIN_DEDICATED_US);
    expect(fixedSpinUs(4, 2)).toBe(SPIN_MIN_US); // a 2 × 2 mesh is 4 threads, whatever its groups' sizes
  });

  it('leaves the budget adaptive when the cores are not known', () => {
    expect(fixedSpinUs(2, undefined)).toBeUndefined();
    expect(fixedSpinUs(2, 0)).toBeUndefined();
  });

  it('is carried by the communicator init, and a bad value is refused naming the field', () => {
    expect(createCommInit(2, 4, { spinUs: 1000 }).spinUs).toBe(1000);
    expect(createCommInit(2, 4).spinUs).toBeUndefined();
    expect(() => createCommInit(2, 4, { spinUs: -1 })).toThrow(/spinUs must be a number ≥ 0/);
  });
});
