// ControlSync's spin policy: the ceiling drops to the minimum only when the runtime reports fewer
// cores than ranks (time-sharing ranks must not spin on each other's core).

import { afterEach, describe, expect, it, vi } from 'vitest';
import { SPIN_MAX_US, SPIN_MIN_US, spinCeilingUs } from '../../../src/runtime/comm/sync';

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
