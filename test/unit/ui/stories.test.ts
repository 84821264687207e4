// Every story's claims checked against the data it shows, under each torch profile's knobs: the
// claims hold for the story's config, and the caption's numbers are the run's own (read here
// straight from the metrics, not from the claims). The first screen's B visibly buckets.

import { describe, expect, it } from 'vitest';
import { FIRST_SCREEN_CONFIG, type SimConfig } from '../../../src/config';
import type { SideResult } from '../../../src/store';
import { fmtBytes, fmtUs } from '../../../src/ui/ui_format';
import { STORIES } from '../../../src/ui/stories';
import { PROFILES, run, storyRun, withProfile } from '../../helpers/story_run';
import { torchMemoryLimit } from '../../../src/ui/claims';

const ag = (s: SideResult) => s.metrics.collectives.all_gather;
const rs = (s: SideResult) => s.metrics.collectives.reduce_scatter;
const exposed = (s: SideResult) => s.metrics.exposedCommUs;

describe('the first screen', () => {
  it.each(PROFILES)("%s: B issues at most 70 percent of A's all-gathers and hides most exposed communication", (p) => {
    const { a, b } = run(withProfile(FIRST_SCREEN_CONFIG as SimConfig, p));
    expect(ag(b)).toBeLessThanOrEqual(0.7 * ag(a));
    expect(exposed(b)).toBeLessThan(0.5 * exposed(a));
    expect(b.schedule!.buckets.length).toBeGreaterThan(10);
  });
});

describe.each(PROFILES)('stories under %s', (p) => {
  it('every story names its model and ranks, so the first screen never changes it', () => {
    for (const s of STORIES) {
      const q = new URLSearchParams(s.query);
      expect(q.has('model') && q.has('ranks'), s.id).toBe(true);
    }
  });

  it('overview: ≥ 30 % fewer all-gathers, exposed communication halved, a shorter step', () => {
    const { a, b, claims, caption } = storyRun('overview', p);
    expect(ag(b)).toBeLessThanOrEqual(0.7 * ag(a));
    expect(exposed(b)).toBeLessThanOrEqual(0.5 * exposed(a));
    expect(b.metrics.stepTimeUs).toBeLessThan(a.metrics.stepTimeUs);
    expect(claims.map((c) => c.holds)).toEqual([true, true, true]);
    expect(caption).toContain(`(${ag(a)} → ${ag(b)})`);
    expect(caption).toContain(`from ${fmtUs(exposed(a))} on A`);
    expect(caption).toContain(`to ${fmtUs(exposed(b))} on B`);
    expect(caption).toContain('llama3-8b on 8 GPUs');
  });

  it("ranks-64: B still leaves ≥ 25 % of its step exposed, hides ≥ 30 % of A's, launches fewer", () => {
    const { a, b, claims, caption } = storyRun('ranks-64', p);
    expect(exposed(b)).toBeGreaterThanOrEqual(0.25 * b.metrics.stepTimeUs);
    expect(exposed(b)).toBeLessThanOrEqual(0.7 * exposed(a));
    expect(ag(b) + rs(b)).toBeLessThan(ag(a) + rs(a));
    expect(claims.every((c) => c.holds)).toBe(true);
    expect(caption).toContain(`all-gathers ${ag(a)} → ${ag(b)}, reduce-scatters ${rs(a)} → ${rs(b)}`);
    expect(caption).toContain(`${fmtUs(exposed(b))} of its ${fmtUs(b.metrics.stepTimeUs)} step exposed`);
    expect(caption).toContain('64 GPUs (8 nodes)');
  });

  it('prefetch-memory: peak rises, nearly all exposed communication hidden, the limit told as it is', () => {
    const { a, b, cfg, claims, caption } = storyRun('prefetch-memory', p);
    const pa = a.metrics.peakMemoryBytes;
    const pb = b.metrics.peakMemoryBytes;
    expect(exposed(b)).toBeLessThanOrEqual(0.1 * exposed(a));
    expect(pb).toBeGreaterThan(pa);
    expect(claims[0].holds && claims[1].holds).toBe(true);
    expect(caption).toContain(`${fmtBytes(pb - pa)} higher (${fmtBytes(pa)} → ${fmtBytes(pb)}`);
    // the limit sentence follows the data: inside or above max(1 GiB, 5 % of A's peak)
    const k = cfg.autobucketing;
    const limit = Math.max(k.max_memory_increase_gb * 1024 ** 3, k.max_memory_increase_ratio * pa);
    expect(torchMemoryLimit(cfg, pa)).toBe(limit);
    expect(claims[2].holds).toBe(pb - pa <= limit);
    const verdict = pb - pa <= limit ? "inside torch's limit" : `more than torch's limit of ${fmtBytes(limit)}`;
    expect(caption).toContain(verdict);
    for (const g of b.schedule!.passStats!) {
      expect(caption).toContain(`${g.phase} ${fmtBytes(g.originalPeakBytes)} → ${fmtBytes(g.peakBytes)}`);
    }
  });

  it("slow-network: B still leaves ≥ 25 % of its step exposed though it hides ≥ 20 % of A's", () => {
    const { a, b, claims, caption } = storyRun('slow-network', p);
    expect(exposed(b)).toBeGreaterThanOrEqual(0.25 * b.metrics.stepTimeUs);
    expect(exposed(b)).toBeLessThanOrEqual(0.8 * exposed(a));
    expect(claims.every((c) => c.holds)).toBe(true);
    expect(caption).toContain(`${fmtUs(exposed(b))} of its ${fmtUs(b.metrics.stepTimeUs)} step exposed`);
  });

  it('straggler: every other rank idles longer than the slow one, on both sides', () => {
    const { a, b, cfg, claims, caption } = storyRun('straggler', p);
    const slow = cfg.straggler.rank!;
    for (const s of [a, b]) {
      const own = s.metrics.perRank.find((r) => r.rank === slow)!.idleUs;
      for (const r of s.metrics.perRank) if (r.rank !== slow) expect(r.idleUs).toBeGreaterThan(own);
    }
    expect(claims[0].holds).toBe(true);
    const minIdle = (s: SideResult) =>
      Math.min(...s.metrics.perRank.filter((r) => r.rank !== slow).map((r) => r.idleUs));
    const waits = `at least ${fmtUs(minIdle(a))} on A and ${fmtUs(minIdle(b))} on B waiting for rank ${slow}`;
    expect(caption).toContain(waits);
  });

  it('hang: B hangs and the caption names the ranks the mismatch names; A runs its full step', () => {
    const { a, b, claims, caption } = storyRun('hang', p);
    const m = b.mismatch!;
    expect(m).toBeDefined();
    expect(a.mismatch).toBeUndefined();
    expect(claims[0].holds).toBe(true);
    // 'buckets' when either rank issued several collectives as one (a member list with a comma)
    const what = m.ops.some((op) => /\[[^\]]*,/.test(op)) ? 'buckets' : 'collectives';
    const named = `B hangs at collective #${m.seq}: ranks ${m.ranks[0]} and ${m.ranks[1]} issued different ${what}`;
    expect(caption).toContain(named);
  });
});
