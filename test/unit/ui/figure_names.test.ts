// One meaning per word: each memory figure has one name, the glossary's, in the table,
// the headline, the claims and the HBM words; each metrics row says how it combines the ranks and
// that is what it computes; a side that hangs shows no full-step figure; the live words name the
// kernels a run used and advise only what Run live A+B will in fact give.

import { describe, expect, it } from 'vitest';
import { parseConfigQuery, type SimConfig } from '../../../src/config';
import type { SideResult } from '../../../src/store';
import { simulateConfig } from '../../../src/store/engine';
import { bHangsANot, hangSpan, peakRises } from '../../../src/ui/claims';
import { MEMORY_NAMES, TERMS, termById } from '../../../src/ui/glossary';
import { overHbmWords, sideHbmFit } from '../../../src/ui/hbm';
import { kernelsWords, liveAdvice, unlikeness } from '../../../src/ui/like_runs';
import { headlineView } from '../../../src/ui/panels/headline';
import { AGGREGATES, ROWS, cellText } from '../../../src/ui/panels/metrics_table';
import { fmtUs } from '../../../src/ui/ui_format';

const cfgOf = (q: string): SimConfig => parseConfigQuery(q).config;
const tinyCfg = cfgOf('model=tiny&ranks=4&jitterPct=10&seed=3'); // jitter: ranks differ, so the aggregates do
const tiny = simulateConfig(tinyCfg);
const hangCfg = cfgOf('model=llama3-8b&ranks=8&jitterPct=20&alignment=false&seed=1'); // the hang story's
let hung: ReturnType<typeof simulateConfig> | undefined;
const hang = () => (hung ??= simulateConfig(hangCfg));

const row = (key: string) => ROWS.find((r) => r.key === key)!;

describe('memory names', () => {
  it('the glossary defines each memory figure once, by its one name', () => {
    const names = Object.values(MEMORY_NAMES);
    for (const n of names) expect(TERMS.filter((t) => t.term === n)).toHaveLength(1);
    expect(termById('peak').term).toBe(MEMORY_NAMES.live);
    expect(termById('peak_allocated').text).toMatch(/^torch\.cuda\.max_memory_allocated/);
    expect(termById('peak_reserved').text).toMatch(/^torch\.cuda\.max_memory_reserved/);
    // no other term is a bare 'peak memory'
    expect(TERMS.some((t) => /^peak memory$/.test(t.term))).toBe(false);
  });

  it('the table rows, the headline, the HBM words and the claims use those names', () => {
    expect([row('peak').label, row('peak_allocated').label, row('peak_reserved').label]).toEqual([
      MEMORY_NAMES.live,
      MEMORY_NAMES.allocated,
      MEMORY_NAMES.reserved,
    ]);
    const h = headlineView(tiny.a, tiny.b, tinyCfg, false);
    expect(h.text).toMatch(new RegExp(`${MEMORY_NAMES.live} [−+][\\d.]+ %|${MEMORY_NAMES.live} 0`));
    expect(h.text).not.toMatch(/peak memory/);
    const fit = sideHbmFit(tiny.a, tinyCfg.hardware)!;
    expect(fit.what).toBe(MEMORY_NAMES.reserved);
    expect(overHbmWords(fit)).toMatch(/^peak reserved /);
    const text = peakRises({ a: tiny.a, b: tiny.b, cfg: tinyCfg }).text;
    expect(text).toContain(MEMORY_NAMES.live);
    expect(text).toContain(MEMORY_NAMES.reserved);
    expect(text).not.toMatch(/peak memory/);
  });
});

describe('each metrics row computes the aggregate it names', () => {
  const s = tiny.b;
  const pr = s.metrics.perRank;
  const mean = (f: (m: (typeof pr)[number]) => number) => pr.reduce((x, m) => x + f(m), 0) / pr.length;

  it('step: first start to last end over ranks', () => {
    expect(row('step').agg).toBe(AGGREGATES.span);
    const span = Math.max(...pr.map((m) => m.endUs)) - Math.min(...pr.map((m) => m.startUs));
    expect(row('step').get(s.metrics, s)).toBeCloseTo(span, 6);
  });

  it('exposed comm and idle: means over ranks; overlap: pooled', () => {
    expect(new Set(pr.map((m) => m.exposedCommUs)).size).toBeGreaterThan(1); // ranks differ here
    expect(row('exposed').agg).toBe(AGGREGATES.mean);
    expect(row('exposed').get(s.metrics, s)).toBeCloseTo(
      mean((m) => m.exposedCommUs),
      6,
    );
    expect(row('idle').agg).toBe(AGGREGATES.mean);
    expect(row('idle').get(s.metrics, s)).toBeCloseTo(
      mean((m) => m.idleUs),
      6,
    );
    expect(row('overlap').agg).toBe(AGGREGATES.pooled);
    const pooled = (100 * pr.reduce((x, m) => x + m.overlapUs, 0)) / pr.reduce((x, m) => x + m.commUs, 0);
    expect(row('overlap').get(s.metrics, s)).toBeCloseTo(pooled, 6);
  });

  it("peak live tensors and collective counts: maxima over ranks; allocator peaks: rank 0's schedule", () => {
    expect(row('peak').agg).toBe(AGGREGATES.max);
    expect(row('peak').get(s.metrics, s)).toBe(Math.max(...s.memory.map((c) => c.peakBytes)));
    expect(row('ag').agg).toBe(AGGREGATES.max);
    expect(row('ag').get(s.metrics, s)).toBe(Math.max(...pr.map((m) => m.collectives.all_gather)));
    expect(row('peak_allocated').agg).toBe(AGGREGATES.rank0);
    expect(row('peak_reserved').agg).toBe(AGGREGATES.rank0);
  });
});

describe('a side that hangs', () => {
  it('shows no full-step figure: step time and the allocator peaks are "not a full step"', () => {
    const { b } = hang();
    expect(b.mismatch).toBeDefined();
    for (const key of ['step', 'peak_allocated', 'peak_reserved']) {
      expect(cellText(row(key), b, row(key).get(b.metrics, b)), key).toBe('not a full step');
    }
    const exposed = row('exposed');
    expect(cellText(exposed, b, exposed.get(b.metrics, b))).toMatch(/ to the hang$/);
    expect(cellText(exposed, tiny.b, exposed.get(tiny.b.metrics, tiny.b))).not.toMatch(/hang/);
    // no HBM claim from a full step's allocator peak
    expect(sideHbmFit(b, hangCfg.hardware)!.fits).toBe(true);
    expect(Number.isNaN(sideHbmFit(b, hangCfg.hardware)!.peakBytes)).toBe(true);
  });

  it("the caption says where each rank's timeline stops, from the events", () => {
    const { a, b } = hang();
    const span = hangSpan(b)!;
    const ends = new Map<number, number>();
    for (const e of b.events) ends.set(e.rank, Math.max(ends.get(e.rank) ?? 0, e.start + e.dur));
    expect(span.ends.map((e) => [e.rank, e.endUs])).toEqual([...ends].sort((x, y) => x[0] - y[0]));
    const past = [...ends.values()].filter((t) => t > b.mismatch!.timeUs).length;
    expect(span.pastMarker).toBe(past);
    expect(past).toBeGreaterThan(0); // ranks run on past the marker: the timeline does not stop there
    const text = bHangsANot({ a, b, cfg: hangCfg }).text;
    expect(text).not.toMatch(/stops there/);
    const last = Math.max(...ends.values());
    const first = Math.min(...ends.values());
    expect(text).toContain(`between ${fmtUs(first)}`);
    expect(text).toContain(`and ${fmtUs(last)}`);
    expect(text).toContain(`${past} of the ${ends.size} ranks drawn run on past the marker`);
    expect(text).toContain(`(rank ${b.mismatch!.ranks[1]}, ${fmtUs(b.mismatch!.timeUs)})`);
  });

  it('the headline says it is not a full step, not that its timeline stops', () => {
    const { a, b } = hang();
    const h = headlineView(a, b, hangCfg, false);
    expect(h.kind).toBe('hang');
    expect(h.text).toMatch(/not a full step/);
    expect(h.text).not.toMatch(/stops there/);
  });
});

describe('live words', () => {
  it("names the kernels a run used, resolving auto from the ranks' labels", () => {
    expect(kernelsWords('webgpu')).toBe('WebGPU kernels');
    expect(kernelsWords('cpu')).toBe('CPU kernels');
    expect(kernelsWords('cost model')).toBe('cost model');
    expect(kernelsWords('auto', 'webgpu: SwiftShader (fallback adapter, core)')).toBe('WebGPU kernels (auto)');
    expect(kernelsWords('auto', 'cpu reference (no WebGPU: no adapter)')).toBe('CPU kernels (auto: no WebGPU device)');
    expect(kernelsWords('auto', '')).toBe('auto kernels (WebGPU, else CPU)');
    expect(termById('kernels').text).toMatch(/'auto' tries WebGPU and falls back to CPU/);
  });

  it('a live B beside a simulated A names its resolved kernels and advises only what A+B gives', () => {
    const b: SideResult = {
      ...tiny.b,
      source: 'live',
      clock: 'live: preset timing',
      title: 'aot_eager_autobucketing (live)',
      run: { model: 'tiny', mesh: 'FSDP 4', kernels: 'auto' },
    };
    const a: SideResult = { ...tiny.a, run: { model: 'tiny', mesh: 'FSDP 4', kernels: 'cost model' } };
    const u = unlikeness(a, b, { timing: 'preset', side: 'b', device: 'webgpu: SwiftShader (core)' })!;
    expect(u.kind).toBe('run');
    expect(u.text).toContain('B: WebGPU kernels (auto)');
    expect(u.text).not.toMatch(/auto kernels/);
    expect(u.text).toContain(liveAdvice('preset'));
    expect(liveAdvice('preset')).toMatch(/not measured/);
    expect(liveAdvice('preset')).not.toMatch(/^[^;]*measured with measured/); // only as what 'measured' would give
    const measured = { ...b, clock: 'live: measured timing' };
    const m = unlikeness(a, measured, { timing: 'measured', side: 'b', device: '' })!;
    expect(m.kind).toBe('clock');
    expect(m.text).toContain(liveAdvice('measured'));
    expect(liveAdvice('measured')).toMatch(/measured with measured/);
  });
});
