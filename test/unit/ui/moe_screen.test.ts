// The MoE screen's pure parts against the run's data: the moe-ep story's claims hold under every
// torch profile and its caption carries the run's own numbers (read here straight from the events
// and metrics); an all-to-all's details name the bytes the model's shapes give and the ep peers the
// mesh gives; the legend draws all-to-alls in a colour of their own; the config panel offers ep and
// the MoE presets, and a refused ep says why.

import { describe, expect, it } from 'vitest';
import { parseConfigQuery } from '../../../src/config';
import { getModelArgs } from '../../../src/model';
import { exposedCommByGroup, type SideResult } from '../../../src/store';
import { createAppStore } from '../../../src/store/app_store';
import { simulateConfig } from '../../../src/store/engine';
import { allToAllExposure, allToAllMoves } from '../../../src/ui/all_to_all_words';
import { configPanelModel } from '../../../src/ui/config_panel_model';
import { termById } from '../../../src/ui/glossary';
import { LEGEND, paletteFor } from '../../../src/ui/palette';
import { reasonsForEvent } from '../../../src/ui/reason_lookup';
import { PROFILES, storyRun } from '../../helpers/story_run';
import { fmtBytes, fmtUs } from '../../../src/ui/ui_format';

const onRank0 = (s: SideResult, kind: string) => s.events.filter((e) => e.rank === 0 && e.kind === kind);

describe.each(PROFILES)('the moe-ep story under %s', (p) => {
  const run = storyRun('moe-ep', p);

  it('runs an MoE model with ep > 1 and every claim holds', () => {
    expect(getModelArgs(run.cfg.model).moe).toBeDefined();
    expect(run.cfg.parallelism.expert_parallel_degree).toBeGreaterThan(1);
    expect(run.claims.map((c) => c.holds)).toEqual(run.claims.map(() => true));
  });

  it('B leaves most exposed comm on ep and less on dp and efsdp, as the caption says', () => {
    const g = exposedCommByGroup(0, run.b.events);
    expect(Object.keys(g).sort()).toEqual(['dp', 'efsdp', 'ep']);
    expect(g.ep).toBeGreaterThanOrEqual(0.5 * run.b.metrics.exposedCommUs);
    expect(g.dp).toBeLessThan(g.ep);
    expect(g.efsdp).toBeLessThan(g.ep);
    // A's FSDP groups are exposed more than B's: those are what the pass hides
    const ga = exposedCommByGroup(0, run.a.events);
    expect(ga.dp + ga.efsdp).toBeGreaterThan(g.dp + g.efsdp);
    expect(run.caption).toContain(fmtUs(g.ep));
    expect(run.caption).toContain(fmtUs(run.b.metrics.exposedCommUs));
  });

  it('counts five all-to-alls per MoE block on both sides, none of them bucketed', () => {
    const args = getModelArgs(run.cfg.model);
    const moeBlocks = args.nLayers - args.moe!.nDenseLayers;
    for (const s of [run.a, run.b]) {
      expect(onRank0(s, 'all_to_all')).toHaveLength(5 * moeBlocks); // fwd counts, dispatch, combine; bwd two
      expect(s.metrics.collectives.all_to_all).toBe(5 * moeBlocks);
    }
    const names = new Set(onRank0(run.b, 'all_to_all').map((e) => e.name));
    const inBuckets = run.b.schedule!.buckets.filter((k) => k.members.length > 1).flatMap((k) => k.members);
    expect(inBuckets.filter((m) => names.has(m))).toEqual([]);
    expect(run.caption).toContain(`${5 * moeBlocks} all-to-alls`);
  });

  it('B shortens the step, by the numbers the caption gives', () => {
    expect(run.b.metrics.stepTimeUs).toBeLessThan(run.a.metrics.stepTimeUs);
    expect(run.caption).toContain(`${fmtUs(run.a.metrics.stepTimeUs)} on A, ${fmtUs(run.b.metrics.stepTimeUs)} on B`);
  });
});

describe('an all-to-all in the details panel', () => {
  const cfg = parseConfigQuery('model=dsv3-debug&ranks=8&parallelism.expert_parallel_degree=4').config;
  const { b } = simulateConfig(cfg);
  const args = getModelArgs(cfg.model);
  const dispatch = (rank: number) => b.events.find((e) => e.rank === rank && /\.dispatch\.all_to_all$/.test(e.name))!;

  it('moves tokens × top-k rows of hidden × bf16 bytes, exchanged with the other ranks of its ep group', () => {
    const rows = args.batch * args.seqLen * args.moe!.topK;
    const e = dispatch(5);
    expect(e.bytes).toBe(rows * args.dim * 2);
    const text = allToAllMoves(e, cfg);
    expect(text).toContain(fmtBytes(e.bytes!));
    expect(text).toContain(`${rows.toLocaleString('en-US')} token rows`);
    expect(text).toContain(`× hidden ${args.dim} × 2 B (bf16)`);
    expect(text).toContain('ranks 4, 6, 7 of its ep group of 4');
    expect(allToAllMoves(dispatch(0), cfg)).toContain('ranks 1, 2, 3 of');
  });

  it('counts 4 B an element when activations run in fp32', () => {
    const fp32 = parseConfigQuery('model=moe-tiny&ranks=4&parallelism.expert_parallel_degree=2&paramDtype=fp32').config;
    const tiny = getModelArgs(fp32.model);
    const e = simulateConfig(fp32).b.events.find((x) => x.rank === 1 && /\.dispatch\.all_to_all$/.test(x.name))!;
    const rows = tiny.batch * tiny.seqLen * tiny.moe!.topK;
    expect(e.bytes).toBe(rows * tiny.dim * 4);
    expect(allToAllMoves(e, fp32)).toContain(`${rows} token rows`);
    expect(allToAllMoves(e, fp32)).toContain(`× hidden ${tiny.dim} × 4 B (fp32), exchanged with rank 0 of`);
  });

  it('says the counts all-to-all carries the per-expert counts', () => {
    const e = b.events.find((x) => x.rank === 0 && /\.counts\.all_to_all$/.test(x.name))!;
    expect(e.bytes).toBe(args.moe!.numExperts * 4); // E int32 counts
    expect(allToAllMoves(e, cfg)).toMatch(/token count per expert/);
  });

  it("explains B's dispatch as exposed: it needs the router's output computed just before", () => {
    const reasons = reasonsForEvent(b.schedule, dispatch(0));
    expect(reasons.map((r) => r.code)).toContain('not_prefetched_depends_on_compute');
    expect(allToAllExposure(reasons)).toMatch(/router's output.*nothing to prefetch.*never buckets/);
  });
});

describe('the legend, the glossary and the config panel on MoE', () => {
  it('gives all-to-all its own legend entry and a colour no other entry has, in both themes', () => {
    const entry = LEGEND.find((l) => l.kinds.includes('all_to_all'))!;
    expect(entry.kinds).toEqual(['all_to_all']);
    for (const theme of ['light', 'dark'] as const) {
      const p = paletteFor(theme);
      const others = LEGEND.filter((l) => l !== entry).map((l) => p[l.color]);
      expect(others).not.toContain(p.all_to_all);
    }
    expect(termById(entry.term).term).toBe('all-to-all');
  });

  it('defines the MoE words', () => {
    for (const id of ['all_to_all', 'expert_parallel', 'efsdp', 'router', 'grouped_gemm']) {
      expect(termById(id).text.length, id).toBeGreaterThan(40);
    }
  });

  it('offers the ep knob and the MoE presets, and a refused ep says why', () => {
    const fields = configPanelModel().flatMap((s) => s.fields);
    const ep = fields.find((f) => f.field.path === 'parallelism.expert_parallel_degree')!;
    expect(ep.control).toBe('text');
    expect(ep.help).toMatch(/all-to-all/);
    const model = fields.find((f) => f.field.path === 'model')!.field;
    const presets = model.kind === 'enum' ? model.values : [];
    for (const m of ['moe-tiny', 'dsv3-debug', 'dsv3-16b', 'dsv3-671b']) expect(presets).toContain(m);
    const store = createAppStore();
    expect(store.getState().setField('parallelism.expert_parallel_degree', 2)).toBe(false); // tiny is dense
    const err = () => store.getState().fieldErrors['parallelism.expert_parallel_degree'];
    expect(err()).toMatch(/expert_parallel_degree \(2\) needs an MoE model/);
    expect(store.getState().setField('model', 'moe-tiny')).toBe(true);
    expect(store.getState().setField('parallelism.expert_parallel_degree', 3)).toBe(false); // 4 ranks
    expect(err()).toMatch(/\(3\) must divide .*\(4 · 1 = 4\)/);
    expect(store.getState().setField('parallelism.expert_parallel_degree', 2)).toBe(true);
    expect(err()).toBeUndefined();
  });
});
