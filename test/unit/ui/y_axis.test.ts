// The charts' shared y axis (src/ui/charts/y_axis.ts): with byte ticks every tick lies on the scale's
// domain, also when the top rounds up into the next unit (the sweep chart used to tick a second
// time on the rounded domain: 1010 MiB rounds to 1.2 GiB, whose GiB ticks left the axis).
import { describe, expect, it } from 'vitest';
import { yAxisOf } from '../../../src/ui/charts/y_axis';
import { byteTicks } from '../../../src/util';

const MIB = 2 ** 20;

describe('yAxisOf', () => {
  it.each([1010 * MIB, 3.3 * 2 ** 30, 750 * 2 ** 10])('ticks inside the domain for a top of %d bytes', (top) => {
    const { y, axis } = yAxisOf(0, top, [100, 0], { yFormat: String, yTicks: byteTicks });
    const [lo, hi] = y.domain();
    expect(hi).toBeGreaterThanOrEqual(top);
    const ticks = axis.tickValues() as number[];
    expect(ticks.length).toBeGreaterThan(1);
    for (const t of ticks) expect(t >= lo && t <= hi, `${t} in [${lo}, ${hi}]`).toBe(true);
  });

  it('niced by d3 and formatted by yFormat without byte ticks', () => {
    const { y, axis } = yAxisOf(0, 97, [100, 0], { yFormat: (v) => `${v} ms` });
    expect(y.domain()).toEqual([0, 100]);
    expect(axis.tickFormat()!(50, 0)).toBe('50 ms');
  });
});
