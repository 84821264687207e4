// A live side is labelled "measured" only when it draws the wall clock the workers measured
// (LIVE_MEASURED_CLOCK); any other live clock, even one that mentions "measured", is the cost model's.
import { describe, expect, it } from 'vitest';
import { LIVE_MEASURED_CLOCK, type SideResult } from '../../../src/store';
import { LIVE_MODEL_CLOCK } from '../../../src/store/store_types';
import { clockKind, clockWords } from '../../../src/ui/clocks';

const live = (clock: string) => ({ source: 'live', clock }) as SideResult;

describe('live clock labels', () => {
  it('only the wall-clock timeline is measured', () => {
    expect(clockKind(live(LIVE_MEASURED_CLOCK))).toBe('measured');
    expect(clockWords(live(LIVE_MEASURED_CLOCK))).toMatch(/real time, measured/);
    expect(clockKind(live(LIVE_MODEL_CLOCK))).toBe('model');
    expect(clockKind(live('live: measured kernel times on the cost model'))).toBe('model');
    expect(clockWords(live(LIVE_MODEL_CLOCK))).toMatch(/not measured/);
    expect(clockKind({ source: 'sim', clock: LIVE_MEASURED_CLOCK } as SideResult)).toBe('model');
  });
});
