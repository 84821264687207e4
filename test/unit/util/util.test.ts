// src/util against references: FNV-1a's published test vectors, torch.median and numpy.median on
// odd and even counts, and the text of sizes as toFixed wrote it before d3-format.
import { describe, expect, it } from 'vitest';
import {
  FNV_OFFSET,
  GIB,
  MIB,
  byteTicks,
  fixed,
  fnv1a,
  fnv1aBytes,
  formatBytes,
  gibText,
  intIn,
  lowerMedianInPlace,
  midpointMedian,
  sizeText,
} from '../../../src/util';
import { lowerMedian } from '../../../src/util/median';
import { ConfigError } from '../../../src/errors';

describe('fnv1a', () => {
  it('matches the FNV-1a 32-bit test vectors', () => {
    expect(fnv1a('')).toBe(0x811c9dc5);
    expect(fnv1a('a')).toBe(0xe40c292c);
    expect(fnv1a('foobar')).toBe(0xbf9cf968);
    expect(fnv1aBytes(new TextEncoder().encode('foobar'))).toBe(0xbf9cf968);
  });

  it('continues from a given state: hashing a then b equals hashing ab', () => {
    expect(fnv1a('bar', fnv1a('foo'))).toBe(fnv1a('foobar'));
    expect(fnv1a('x', (FNV_OFFSET ^ 7) >>> 0)).not.toBe(fnv1a('x'));
  });
});

describe('medians', () => {
  it('lowerMedian takes the lower middle value (torch.median), midpointMedian their mean (numpy)', () => {
    expect(lowerMedian([3, 1, 2])).toBe(2);
    expect(lowerMedian([4, 1, 3, 2])).toBe(2);
    expect(midpointMedian([4, 1, 3, 2])).toBe(2.5);
    expect(midpointMedian([10, -1, 3])).toBe(3);
  });

  it('lowerMedianInPlace sorts numerically, not as text', () => {
    const xs = Float64Array.from([10, 9, 100]);
    expect(lowerMedianInPlace(xs)).toBe(10);
    expect([...xs]).toEqual([9, 10, 100]);
  });
});

describe('units', () => {
  it('writes fixed-point numbers as toFixed did, with a hyphen minus', () => {
    for (const x of [0, 1.005, 2.5, -3.25, 79.18, 1e6 + 0.125]) expect(fixed(x, 2)).toBe(x.toFixed(2));
    expect(gibText(79.18 * GIB)).toBe('79.18 GiB');
    expect(gibText(1.5 * GIB, 1)).toBe('1.5 GiB');
  });

  it('formats bytes in the largest binary unit, a no-break space before it', () => {
    expect(formatBytes(512)).toBe('512\u00a0B');
    expect(formatBytes(1536)).toBe('1.5\u00a0KiB');
    expect(formatBytes(416.02 * 2 ** 20)).toBe('416.02\u00a0MiB');
    expect(formatBytes(14 * 2 ** 50)).toBe('14.00\u00a0PiB');
    expect(formatBytes(Number.NaN)).toBe('–');
  });

  it("writes a size beside torch's GB knobs in GiB down to 0.1 GiB, then MiB, then KiB", () => {
    expect(sizeText(40 * 1024)).toBe('40.0 KiB');
    expect(sizeText(3 * 2 ** 20)).toBe('3.0 MiB');
    expect(sizeText(0.5 * GIB)).toBe('0.50 GiB');
    expect(sizeText(5 * GIB)).toBe('5.00 GiB');
    expect(sizeText(12.5 * GIB)).toBe('12.5 GiB');
  });
});

describe('intIn', () => {
  it('returns a safe integer in range, and names the field, range and value otherwise', () => {
    expect(intIn('ranks', 4, 1, 16)).toBe(4);
    for (const bad of [0, 17, 2.5, '4', Number.NaN, 2 ** 53]) {
      expect(() => intIn('ranks', bad, 1, 16)).toThrow(ConfigError);
    }
    expect(() => intIn('ranks', 2.5, 1, 16)).toThrow('ranks must be an integer in [1, 16], got 2.5');
  });
});

describe('byteTicks', () => {
  it('ticks round numbers in the unit on screen, not in bytes: 0, 10, 20, 30 GiB, not 9.31 GiB steps', () => {
    const peak = 27.94 * GIB; // a llama3-8b x 8 memory curve
    const t = byteTicks(0, peak, 4);
    expect(t.ticks.map((b) => b / GIB)).toEqual([0, 10, 20, 30]);
    expect(t.domain.map((b) => b / GIB)).toEqual([0, 30]);
    expect(t.ticks.map(t.label)).toEqual(['0\u00a0GiB', '10\u00a0GiB', '20\u00a0GiB', '30\u00a0GiB']);
    for (const v of t.ticks) expect(Number.isInteger(v / GIB)).toBe(true);
    // the step's decimals and the unit of the larger end
    expect(byteTicks(0, 3.3 * GIB, 4).ticks.map((b) => b / GIB)).toEqual([0, 1, 2, 3, 4]);
    expect(byteTicks(0, 1.7 * GIB, 4).ticks.map((b) => b / GIB)).toEqual([0, 0.5, 1, 1.5, 2]);
    expect(byteTicks(0, 1.7 * GIB, 4).label(1.5 * GIB)).toBe('1.5\u00a0GiB');
    expect(byteTicks(0, 700 * MIB, 4).label(200 * MIB)).toBe('200\u00a0MiB');
    expect(byteTicks(0, 500, 4).ticks).toEqual([0, 100, 200, 300, 400, 500]);
  });
});
