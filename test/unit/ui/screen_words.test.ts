// The small pure parts behind the screen's words: byte sizes scaled past GiB, a legend entry
// for every kind the timeline draws, an unknown-URL-parameter message that names a few fields and
// counts the rest, the window Learn one layer follows (both sides' ops whole), and the tour's
// "what B does" sentence checked against the simulated run it describes.

import { describe, expect, it } from 'vitest';
import { CONFIG_FIELDS, defaultConfig, parseConfigQuery, type SimConfig } from '../../../src/config';
import { unknownParamMessage } from '../../../src/config/url';
import { compareBackends } from '../../../src/pipeline';
import { sideFromRun } from '../../../src/store/engine';
import type { SideResult } from '../../../src/store';
import { fmtBytes } from '../../../src/ui/ui_format';
import { forHand, navHint } from '../../../src/ui/input_kind';
import { LEGEND, legendFor } from '../../../src/ui/palette';
import { followWindow, type FollowView, type WalkStep } from '../../../src/ui/step_walk';
import { KIND_CODES } from '../../../src/ui/timeline/columns';
import { defineVerb, whatBDoes } from '../../../src/ui/tour_text';
import { knobTooltip } from '../../../src/ui/glossary';

const GIB = 2 ** 30;

describe('fmtBytes past GiB', () => {
  it('scales to TiB, PiB and EiB instead of printing millions of GiB', () => {
    expect(fmtBytes(14383148.32 * GIB)).toBe('13.72\u00a0PiB');
    expect(fmtBytes(2048 * GIB)).toBe('2.00\u00a0TiB');
    expect(fmtBytes(1023.5 * GIB)).toBe('1023.50\u00a0GiB');
    expect(fmtBytes(3 * 2 ** 60)).toBe('3.00\u00a0EiB');
    expect(fmtBytes(2 ** 80)).toBe('1.05e+6\u00a0EiB'); // past the last unit: an exponent, still short
    expect(fmtBytes(-5 * 2 ** 40)).toBe('-5.00\u00a0TiB');
    for (const b of [1, 1e3, 1e6, 1e9, 1e12, 1e15, 1e18, 1e21]) expect(fmtBytes(b).length).toBeLessThanOrEqual(13);
  });
});

describe('legend', () => {
  it('has an entry for every kind the timeline draws', () => {
    const covered = new Set(LEGEND.flatMap((l) => l.kinds));
    expect(KIND_CODES.filter((k) => !covered.has(k))).toEqual([]);
  });

  it('shows the kinds of a simulated step always, and live or import kinds only when drawn', () => {
    const sim = legendFor(new Set(['compute', 'all_gather', 'reduce_scatter', 'wait'])).map((l) => l.key);
    expect(sim).toEqual(['compute', 'all_gather', 'reduce_scatter', 'wait']);
    const live = legendFor(new Set(['compute', 'readback', 'barrier'])).map((l) => l.key);
    expect(live).toContain('readback');
    expect(live).toContain('barrier');
    expect(live).not.toContain('upload');
  });

  it('hints name the gestures of the input at hand', () => {
    expect(navHint('touch')).toMatch(/pinch/);
    expect(navHint('touch')).not.toMatch(/wheel|W\/S|click/i);
    expect(navHint('mouse')).toMatch(/wheel/);
    expect(defineVerb('touch')).not.toMatch(/hover/i);
  });
});

describe('unknown URL parameters', () => {
  it('suggest the near names, never list every field, and count the rest', () => {
    const known = CONFIG_FIELDS.map((f) => f.path);
    const m = unknownParamMessage('rank', known);
    expect(m).toMatch(/^unknown URL parameter "rank": did you mean ranks/);
    const named = (/did you mean ([^?]+)\?/.exec(m)?.[1] ?? '').split(', ');
    expect(named).toEqual(['ranks', 'straggler.rank']);
    expect(m).toContain(`and ${known.length - named.length} more`);
    const far = unknownParamMessage('zz', known);
    expect(far).toMatch(/config fields such as/);
    expect(known.filter((k) => far.includes(` ${k}`)).length).toBeLessThanOrEqual(3);
    // the page's parse reports it on the key, and keeps the rest of the link
    const { errors, config } = parseConfigQuery('rank=3&ranks=2');
    expect(errors.map((e) => e.field)).toEqual(['rank']);
    expect(config.ranks).toBe(2);
  });
});

describe('Learn one layer: the followed window', () => {
  const op = (startUs: number, durUs: number): WalkStep => ({
    eventIndex: 0,
    name: 'x',
    kind: 'compute',
    phase: 'forward',
    startUs,
    durUs,
    inFlight: [],
    memoryBytes: NaN,
  });
  /** The window each timeline draws: the shared one for A, shifted for B. */
  const windows = (f: FollowView) => ({
    a: f.window,
    b: { startUs: f.window.startUs + f.shiftUs, endUs: f.window.endUs + f.shiftUs },
  });
  it("holds each side's op whole in its timeline's window, at a readable zoom however far apart", () => {
    const cases = [
      [op(100, 5), op(9000, 40)],
      [op(5000, 2), op(10, 1)],
      [op(7, 3), undefined],
      [undefined, op(40, 3)],
      [op(1000, 300), op(1100, 280)],
      [op(1_059_079, 4), op(722_724, 4)],
    ] as const;
    for (const [a, b] of cases) {
      const f = followWindow(a, b)!;
      const w = windows(f);
      const longest = Math.max(a?.durUs ?? 0, b?.durUs ?? 0);
      for (const [s, win] of [
        [a, w.a],
        [b, w.b],
      ] as const)
        if (s) {
          expect(win.startUs).toBeLessThan(s.startUs);
          expect(win.endUs).toBeGreaterThan(s.startUs + s.durUs);
        }
      // readable: the longer op fills at least 1/20 of the window (not 0–863 ms around a 4 µs op)
      expect(longest / (f.window.endUs - f.window.startUs)).toBeGreaterThanOrEqual(1 / 20);
    }
    expect(followWindow(op(1000, 300), op(1100, 280))!.shiftUs).toBe(0); // close: one window, no shift
    expect(followWindow(op(1_059_079, 4), op(722_724, 4))!.shiftUs).toBe(722_724 - 1_059_079);
    expect(followWindow(undefined, undefined)).toBeNull();
  });
});

describe('the tour says what B does, from the run', () => {
  const sides = (model: string, ranks: number): { a: SideResult; b: SideResult } => {
    const cfg: SimConfig = { ...defaultConfig(), model: model as SimConfig['model'], ranks };
    const { a, b } = compareBackends(cfg);
    return { a: sideFromRun(a), b: sideFromRun(b) };
  };

  it("names the pass's three moves and fills in the counts of the run", () => {
    const { a, b } = sides('tiny', 4);
    const text = whatBDoes(a, b);
    expect(text).toMatch(/starts each collective as early/);
    expect(text).toMatch(/overlap/);
    expect(text).toMatch(/merges small ones into buckets/);
    const ca = a.metrics.collectives;
    const cb = b.metrics.collectives;
    const counts = `A launches ${ca.all_gather} all-gathers and ${ca.reduce_scatter} reduce-scatters`;
    expect(text).toContain(`${counts}, B ${cb.all_gather} and ${cb.reduce_scatter}`);
    const early = new Set(b.schedule!.reasons.filter((r) => r.code === 'prefetched').map((r) => r.node)).size;
    expect(text).toContain(`starts ${early} collective`);
    const merged = b.schedule!.buckets.filter((k) => k.members.length > 1).length;
    expect(text).toContain(merged > 0 ? `${merged} bucket` : 'nothing merged');
    expect(text).toContain(b.metrics.exposedCommUs < a.metrics.exposedCommUs ? '→' : 'hides no more than A');
  });

  it('makes no claim the numbers do not bear: same run on both sides', () => {
    const { a } = sides('tiny', 4);
    const text = whatBDoes(a, { ...a, backend: 'aot_eager_autobucketing', schedule: { ...a.schedule!, buckets: [] } });
    expect(text).toContain('nothing merged');
    expect(text).toContain('hides no more than A');
  });
});

describe('mouse words on touch', () => {
  it('forHand says tap for click on touch, keeps the sentence on a mouse', () => {
    const hint = 'Click a green all-gather on B; clicking it again, or a click elsewhere, clears it.';
    expect(forHand(hint, 'mouse')).toBe(hint);
    expect(forHand(hint, 'touch')).toBe(
      'Tap a green all-gather on B; tapping it again, or a tap elsewhere, clears it.',
    );
    expect(forHand('click a point to load it; clicks, clicked', 'touch')).toBe('tap a point to load it; taps, tapped');
    expect(forHand('clickable quickly', 'touch')).toBe('clickable quickly'); // whole words only
  });
});

describe('config labels', () => {
  it("name what a knob is, not a PR number; the knob's help cites the PR", () => {
    for (const f of CONFIG_FIELDS) expect(f.label, f.path).not.toMatch(/#\d/);
    const sp = CONFIG_FIELDS.find((f) => f.path === 'seqParallelGatherCopy')!;
    expect(sp.label).toBe('SP all-gather copy (older torch)');
    expect(knobTooltip('seqParallelGatherCopy', 'true or false')).toContain('PR #169404');
  });
});
