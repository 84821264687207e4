// The teaching aids' pure parts: tick labels that resolve their step, byte sizes that never
// wrap, plain words for every knob and reason, story configs that validate, clock kinds, and
// the step-through's walk of one block checked against the simulated events (brute force).

import { describe, expect, it } from 'vitest';
import type { ReasonCode } from '../../../src/backends/schedule_types';
import { CONFIG_FIELDS, defaultConfig, validateConfig } from '../../../src/config';
import { compareBackends } from '../../../src/pipeline';
import { sideFromRun } from '../../../src/store/engine';
import type { SideResult } from '../../../src/store';
import { clockKind, sameClock } from '../../../src/ui/clocks';
import { fmtBytes, fmtTick } from '../../../src/ui/ui_format';
import { REASON_PLAIN, knobHelp, knobTooltip, plainReason } from '../../../src/ui/glossary';
import { STORIES, storyConfig } from '../../../src/ui/stories';
import { blocksOf, leadIn, memoryAt, opIdentity, pairWalks, walkBlock, type WalkStep } from '../../../src/ui/step_walk';

describe('format', () => {
  it('fmtTick(t, step) gives every tick of a 1 µs window at 231.7 ms its own label', () => {
    const ticks = [231_700, 231_700.2, 231_700.4, 231_700.6, 231_700.8, 231_701];
    const labels = ticks.map((t) => fmtTick(t, 0.2));
    expect(new Set(labels).size).toBe(ticks.length);
    expect(labels[1]).toBe('231.7002ms');
    expect(fmtTick(2000, 1000)).toBe('2ms');
    expect(fmtTick(0, 500)).toBe('0µs');
    expect(fmtTick(231_700)).toBe('231.7ms'); // without a step: 4 significant digits as before
  });

  it('fmtBytes joins number and unit with a no-break space', () => {
    expect(fmtBytes(416.02 * 2 ** 20)).toBe('416.02\u00a0MiB');
    expect(fmtBytes(40 * 1024)).toBe('40.0\u00a0KiB');
    expect(fmtBytes(12)).toBe('12\u00a0B');
  });
});

describe('plain words', () => {
  it('every config field has help, and every autobucketing knob names its torch argument', () => {
    for (const f of CONFIG_FIELDS) {
      expect(knobHelp(f.path), f.path).toBeDefined();
      expect(knobTooltip(f.path, 'x').split('\n').length, f.path).toBeGreaterThan(1);
      if (f.path.startsWith('autobucketing.')) {
        expect(knobHelp(f.path)!.torch, f.path).toBeTruthy();
        expect(knobTooltip(f.path, 'x')).toContain(
          f.path.split('.')[1] === 'assume_bucketing_reduces_latency'
            ? 'assume_bucketing_reduces_latency'
            : `${f.path.split('.')[1]}=`,
        );
      }
    }
  });

  it('every reason code has a plain sentence, and an unknown code still reads as words', () => {
    const codes = Object.keys(REASON_PLAIN) as ReasonCode[];
    expect(codes.length).toBeGreaterThan(10);
    expect(knobHelp('autobucketing.max_in_flight_gb')?.cost).toMatch(/^raising it/);
    for (const c of codes) expect(plainReason(c)).toMatch(/^[A-Z].*\.$/);
    expect(plainReason('some_new_code')).toBe('some new code');
  });

  it('every story preset is a valid config', () => {
    const ids = new Set<string>();
    for (const s of STORIES) {
      expect(ids.has(s.id)).toBe(false);
      ids.add(s.id);
      const r = validateConfig(storyConfig(s));
      expect(r.ok, s.id).toBe(true);
      expect(s.zoom[0]).toBeLessThan(s.zoom[1]);
    }
    expect(STORIES.length).toBeGreaterThanOrEqual(4);
    expect(STORIES.length).toBeLessThanOrEqual(6 + 1); // 4–6 scenarios plus the overview
  });
});

describe('clocks', () => {
  const side = (source: SideResult['source'], clock: string) => ({ source, clock }) as SideResult;
  it('a measured live side is never on the same clock as a simulated one', () => {
    expect(clockKind(side('sim', 'cost model: h100'))).toBe('model');
    expect(clockKind(side('live', 'live: measured timing'))).toBe('measured');
    expect(clockKind(side('live', 'live: preset timing'))).toBe('model');
    expect(sameClock(side('sim', 'x'), side('live', 'live: measured timing'))).toBe(false);
    expect(sameClock(side('live', 'live: measured timing'), side('live', 'live: measured timing'))).toBe(true);
    expect(sameClock(side('sim', 'x'), side('import', 'imported trace'))).toBe(false);
  });
});

describe('step-through walk', () => {
  const { a, b } = compareBackends(defaultConfig());
  const sides = [sideFromRun(a), sideFromRun(b)];

  it('memoryAt(curve, t) is the last change at or before t', () => {
    const curve = sides[0].memory.find((m) => m.rank === 0)!;
    for (let i = 0; i < curve.t.length; i += Math.max(1, Math.floor(curve.t.length / 50))) {
      const t = curve.t[i] + 1e-6;
      let j = 0;
      while (j + 1 < curve.t.length && curve.t[j + 1] <= t) j++;
      expect(memoryAt(curve, t)).toBe(curve.bytes[j]);
    }
  });

  it('walks block 0 in time order on rank 0, forward before backward, with what is in flight', () => {
    for (const s of sides) {
      expect(blocksOf(s.events)[0]).toBe(0);
      const walk = walkBlock(s.events, s.memory, 0);
      expect(walk.length).toBeGreaterThan(10);
      for (let i = 1; i < walk.length; i++) expect(walk[i].startUs).toBeGreaterThanOrEqual(walk[i - 1].startUs);
      const phases = walk.map((w) => w.phase);
      expect(phases[0]).toBe('forward');
      expect(phases.lastIndexOf('forward')).toBeLessThan(phases.indexOf('backward'));
      for (const w of walk) {
        const e = s.events[w.eventIndex];
        expect(e.rank).toBe(0);
        expect(e.stream).toBe('compute');
        // brute force: the collectives running on rank 0 when the op starts
        const brute = s.events
          .filter((c) => c.rank === 0 && c.stream !== 'compute' && c.start <= e.start && c.start + c.dur > e.start)
          .map((c) => c.name);
        expect(w.inFlight.map((c) => c.name)).toEqual(brute);
      }
    }
    // B's bucketed waits (bucket_<k>.wait) are attributed to the block through their members (on 8
    // ranks, where B merges collectives inside block 0)
    const eight = validateConfig({ ...defaultConfig(), ranks: 8 });
    if (!eight.ok) throw eight.error;
    const b8 = sideFromRun(compareBackends(eight.value).b);
    const walkB = walkBlock(b8.events, b8.memory, 0);
    expect(walkB.some((w) => /^bucket_\d+\.wait$/.test(w.name))).toBe(true);
  });
});

describe('step-through pairing: both sides on the same op', () => {
  const step = (name: string, kind: WalkStep['kind'], op?: string): WalkStep => ({
    eventIndex: 0,
    name,
    kind,
    op,
    phase: 'forward',
    startUs: 0,
    durUs: 1,
    inFlight: [],
    memoryBytes: NaN,
  });
  it("pairs ops by what they compute, in A's order; waits and bucket copies are no step", () => {
    const a = [
      step('w.cast', 'compute', 'cast'),
      step('w.wait', 'wait', 'wait_tensor'),
      step('mm', 'compute', 'matmul'),
      step('add', 'compute', 'add'),
    ];
    const b = [
      step('w.cast', 'compute', 'cast'),
      step('bucket_0.wait', 'wait', 'wait_tensor'),
      step('bucket_0.wait.copy_out.0', 'compute', 'copy'),
      step('add', 'compute', 'add'),
      step('extra', 'compute', 'x'),
      step('mm', 'compute', 'matmul'),
    ];
    expect(opIdentity(b[2])).toBeNull();
    expect(pairWalks(a, b)).toEqual([
      { name: 'w.cast', a: 0, b: 0 },
      { name: 'mm', a: 2, b: 5 },
      { name: 'add', a: 3, b: 3 },
      { name: 'extra', a: -1, b: 4 },
    ]);
    expect(leadIn(b, 3).map((s) => s.name)).toEqual(['bucket_0.wait', 'bucket_0.wait.copy_out.0']);
    expect(leadIn(a, 2).map((s) => s.name)).toEqual(['w.wait']);
    expect(leadIn(a, 0)).toEqual([]);
  });

  it("on llama3-8b × 8, where A's op k and B's op k differ, every step is one op on both sides", () => {
    const cfg = validateConfig({ ...defaultConfig(), model: 'llama3-8b', ranks: 8 });
    if (!cfg.ok) throw cfg.error;
    const { a, b } = compareBackends(cfg.value);
    const [sa, sb] = [sideFromRun(a), sideFromRun(b)];
    const wa = walkBlock(sa.events, sa.memory, 0);
    const wb = walkBlock(sb.events, sb.memory, 0);
    expect(wa.some((s, k) => wb[k] && s.name !== wb[k].name)).toBe(true); // pairing by position would mismatch
    const pairs = pairWalks(wa, wb);
    for (const p of pairs) {
      expect(p.a >= 0 && p.b >= 0, p.name).toBe(true); // both schedules run every compute op of the block
      expect(wa[p.a].name).toBe(p.name);
      expect(wb[p.b].name).toBe(p.name);
      expect(sa.events[wa[p.a].eventIndex].op).toBe(sb.events[wb[p.b].eventIndex].op);
    }
    const computed = (w: readonly WalkStep[]) => w.filter((s) => opIdentity(s) !== null).length;
    expect(pairs.length).toBe(computed(wa));
    expect(pairs.length).toBe(computed(wb));
    expect(pairs.map((p) => p.a)).toEqual([...pairs.map((p) => p.a)].sort((x, y) => x - y)); // in A's order
    expect(pairs.some((p) => p.name.endsWith('.wait'))).toBe(false);
    // the waits are still told: before the op they delay
    expect(pairs.some((p) => leadIn(wa, p.a).some((s) => s.kind === 'wait'))).toBe(true);
    expect(pairs.some((p) => leadIn(wb, p.b).some((s) => /^bucket_\d+\.wait$/.test(s.name)))).toBe(true);
  });
});
