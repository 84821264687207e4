// src/util's time and percent text: the unit a duration's size calls for, fixed units for
// columns, the missing-value text, axis ticks that resolve their step, and percentages.
import { describe, expect, it } from 'vitest';
import { MISSING, formatDuration, formatPercent, formatShare, formatTimeTick } from '../../../src/util';

describe('formatDuration', () => {
  it('writes µs, ms and s with about four significant digits', () => {
    expect(formatDuration(4.567)).toBe('4.57 µs');
    expect(formatDuration(846.64)).toBe('846.6 µs');
    expect(formatDuration(12_345)).toBe('12.35 ms'); // toFixed's decimal rounding of 12.345
    expect(formatDuration(231_700)).toBe('231.7 ms');
    expect(formatDuration(1_204_000)).toBe('1.20 s');
    expect(formatDuration(-2500)).toBe('-2.50 ms');
  });

  it('writes nothing at all as 0 µs, not 0.00 µs; a column with fixed digits keeps them', () => {
    expect(formatDuration(0)).toBe('0 µs');
    expect(formatDuration(-0)).toBe('0 µs');
    expect(formatDuration(0, { unit: 'ms' })).toBe('0 ms');
    expect(formatDuration(0, { unit: 'ms', digits: 3 })).toBe('0.000 ms');
    expect(formatDuration(0.001)).toBe('0.00 µs'); // not nothing: rounds, keeps its digits
  });

  it('picks the unit by magnitude at the unit boundaries', () => {
    expect(formatDuration(999.9)).toBe('999.9 µs');
    expect(formatDuration(1000)).toBe('1.00 ms');
    expect(formatDuration(999_999)).toBe('1000.0 ms');
    expect(formatDuration(1e6)).toBe('1.00 s');
  });

  it('writes a fixed unit and digits for a column, bare when the header names the unit', () => {
    expect(formatDuration(12_345.678, { unit: 'ms', digits: 3 })).toBe('12.346 ms');
    expect(formatDuration(1_234_567.25, { unit: 'µs', digits: 1, bare: true })).toBe('1234567.3');
    expect(formatDuration(0.04, { unit: 'µs', digits: 1, bare: true })).toBe('0.0');
  });

  it('gives the missing text for null, undefined and non-finite durations', () => {
    for (const x of [null, undefined, Number.NaN, Number.POSITIVE_INFINITY]) expect(formatDuration(x)).toBe(MISSING);
    expect(formatDuration(null, { unit: 'µs', bare: true })).toBe(MISSING);
  });

  it('matches toFixed in the chosen unit, over many magnitudes', () => {
    for (let e = -2; e <= 8; e += 0.37) {
      const us = 10 ** e;
      const [div, unit] = us >= 1e6 ? [1e6, 's'] : us >= 1e3 ? [1e3, 'ms'] : [1, 'µs'];
      const digits = unit === 's' ? 2 : unit === 'ms' ? (us >= 1e5 ? 1 : 2) : us >= 10 ? 1 : 2;
      expect(formatDuration(us)).toBe(`${(us / div).toFixed(digits)} ${unit}`);
    }
  });
});

describe('formatTimeTick', () => {
  it('writes four significant digits without a step, and the digits the step needs with one', () => {
    expect(formatTimeTick(231_712.5)).toBe('231.7ms');
    expect(formatTimeTick(2000, 1000)).toBe('2ms');
    expect([231_700.2, 231_700.4].map((t) => formatTimeTick(t, 0.2))).toEqual(['231.7002ms', '231.7004ms']);
    expect(formatTimeTick(500, 100)).toBe('500µs');
    expect(formatTimeTick(3.5e6, 5e5)).toBe('3.5s');
  });
});

describe('formatPercent', () => {
  it('writes percentage points with a space before the sign, one decimal unless told', () => {
    expect(formatPercent(57.25)).toBe('57.3 %');
    expect(formatPercent(100)).toBe('100.0 %');
    expect(formatPercent(0.1234, 2)).toBe('0.12 %');
    expect(formatPercent(12.5, 0)).toBe('13 %');
    expect(formatPercent(Number.NaN)).toBe(MISSING);
  });

  it('formatShare takes part of whole, and 0 % of nothing', () => {
    expect(formatShare(1, 3, 0)).toBe('33 %');
    expect(formatShare(3, 3, 0)).toBe('100 %');
    expect(formatShare(1, 8)).toBe('12.5 %');
    expect(formatShare(5, 0, 0)).toBe('0 %');
  });
});
