// The sentences of the backends' reasons (src/words/): each form worded from its facts, the
// sentences the backends' own runs give, and the CLI's worded forms (JSON, torch-log comparison).
import { describe, expect, it } from 'vitest';
import {
  AUTOBUCKETING_PROFILES,
  runAotEager,
  runAutobucketing,
  runFsdp2Eager,
  runTransformerBlock,
  type Reason,
  type ReasonDetail,
} from '../../../src/backends';
import { reasonText } from '../../../src/words';
import { handGraph, rooflineCost } from '../backends/helpers';

const text = (detail: ReasonDetail) => reasonText({ detail });

describe('reasonText', () => {
  it('words the scheduling decisions of autobucketing with torch knob names', () => {
    expect(text({ kind: 'prefetched', coll: 'all_gather', behind: 'mm_3', ahead: 2, estMs: 0.4, exposedMs: 0.1 })).toBe(
      'all_gather prefetched behind mm_3 (2 compute node(s) before its first use); 75 % of its 400.0 µs hidden.',
    );
    expect(text({ kind: 'prefetched', coll: 'all_gather', behind: 'mm', ahead: null, estMs: 0, exposedMs: 0 })).toMatch(
      /\(off the compute path\); 100 % of its /,
    );
    const refused = (refusal: Extract<ReasonDetail, { kind: 'refused' }>['refusal']) =>
      text({ kind: 'refused', behind: 'mm_1', refusal, estMs: 1, exposedMs: 1 });
    expect(refused({ code: 'not_prefetched_in_flight_budget', bytes: 5 * 2 ** 30, limitBytes: 0 })).toBe(
      'not prefetched behind mm_1: in-flight budget full (5.00 GiB > max_in_flight_gb 0.0 KiB). ' +
        '0 % of it hidden in the end.',
    );
    expect(refused({ code: 'not_prefetched_compute_distance', computeNodesAhead: 7 })).toMatch(
      /^not prefetched behind mm_1: needed 7 compute nodes later, beyond max_compute_pre_fetch\. /,
    );
    const memory = { bytes: 3 * 2 ** 30, limitBytes: 2 ** 30, originalPeakBytes: 2 ** 29 };
    expect(refused({ code: 'not_prefetched_memory_budget', ...memory })).toMatch(
      /memory would reach 3\.00 GiB > allowed 1\.00 GiB \(original peak 0\.50 GiB \+ max\(/,
    );
    expect(refused({ code: 'not_prefetched_depends_on_compute', blocker: null, wait: false })).toMatch(
      /: it depends on that node\. /,
    );
    expect(refused({ code: 'not_prefetched_depends_on_compute', blocker: 'wait_2', wait: true })).toMatch(
      /: it needs wait wait_2, whose collective is not yet hidden\. /,
    );
    expect(refused({ code: 'not_prefetched_depends_on_compute', blocker: 'add', wait: false })).toMatch(
      /: it needs add, which had not run yet\. /,
    );
    expect(text({ kind: 'ready_queue', coll: 'reduce_scatter', estMs: 2, exposedMs: 0.5 })).toBe(
      'reduce_scatter issued from the ready queue; its wait came after only 1.50 ms of work, ' +
        '500.0 µs of 2.00 ms exposed.',
    );
    expect(text({ kind: 'no_compute', coll: 'all_gather', exposedMs: 1 })).toMatch(/nothing ran between its start/);
  });

  it('words the bucketing decisions, pre-bucketing included', () => {
    expect(text({ kind: 'bucketed', coll: 'all_gather', members: 3, bucket: 4, bytes: 40 * 1024 })).toBe(
      'bucketed with 2 other all_gather(s) into bucket 4 (40.0 KiB in + out); one launch instead of 3.',
    );
    expect(text({ kind: 'pre_bucketed', members: 26, merged: 'all_gather_into_tensor_out' })).toBe(
      "pre-bucketed with 25 other collective(s) before scheduling (torch 2.13's FSDP pre-bucketing, " +
        '`all_gather_into_tensor_out`); one launch instead of 26.',
    );
    expect(text({ kind: 'not_bucketed', why: 'byte_cap', seed: 'ag_1' })).toBe(
      'not bucketed with ag_1: the bucket would exceed max_bucket_memory_gb.',
    );
    expect(text({ kind: 'not_bucketed', why: 'hides_other', seed: 'ag_1' })).toMatch(/^not bucketed: its start/);
  });

  it('words transformer_block and FSDP2 in torchtitan terms', () => {
    const one = {
      kind: 'block_bucket',
      coll: 'all_gather',
      module: 'layers.1',
      phase: 'forward',
      entry: 3,
      entries: 5,
    } as const;
    expect(text({ ...one, members: 3 })).toBe(
      "one of 3 all_gathers merged into layers.1's forward bucket: entry 3 of 5 of torchtitan's module bucket plan " +
        "(torch's manual scheduler).",
    );
    expect(text({ ...one, members: 1 })).toMatch(/^the only all_gather of layers\.1 in forward, a bucket of one/);
    expect(text({ kind: 'block_prefetch_reduce_scatter', module: 'layers.2', next: null })).toBe(
      "layers.2's reduce-scatter bucket is the last; its wait stays where the program has it.",
    );
    expect(text({ kind: 'block_prefetch_reduce_scatter', module: 'layers.2', next: 'layers.1' })).toMatch(
      /^layers\.2's reduce-scatter bucket is waited only after layers\.1's is issued/,
    );
    expect(text({ kind: 'block_prefetch_all_gather', before: 'layers.0', at: 'wait' })).toMatch(
      /^started before layers\.0's all-gather wait, so it overlaps layers\.0's compute/,
    );
    expect(text({ kind: 'block_prefetch_all_gather', before: 'mm_3', at: 'compute' })).toMatch(
      /^started before mm_3, the first compute node/,
    );
    const flat = { kind: 'fsdp2_bucket', phase: 'backward', group: 'tp', module: 'layers.0' } as const;
    expect(text({ ...flat, coll: 'all_reduce' })).toMatch(/^all-reduced on tp with the rest of layers\.0: FSDP2/);
    expect(text({ ...flat, coll: 'all_gather' })).toMatch(/^all-gathered \(backward\) with/);
    expect(text({ kind: 'fsdp2_prefetch_all_gather', phase: 'backward', module: 'output' })).toBe(
      "FSDP2's backward prefetch: issued on the all-gather stream one module ahead of output's compute.",
    );
  });
});

describe('the sentences of each backend on a hand-made graph', () => {
  const g = handGraph({ layers: 4, paramsPerLayer: 3, seed: 7, elementwise: true });
  const cost = rooflineCost();
  const run211 = (o: Parameters<typeof runAutobucketing>[2] = {}) =>
    runAutobucketing(g, cost, { ...AUTOBUCKETING_PROFILES['torch-2.11'], collective_bucketing: false, ...o });
  const sentences = (rs: readonly Reason[]) => rs.map(reasonText);

  it('every reason of every backend is one sentence', () => {
    for (const s of [runAotEager(g, cost), runAutobucketing(g, cost), run211(), runTransformerBlock(g, cost)]) {
      for (const t of sentences(s.reasons)) expect(t, s.backend).toMatch(/^[a-z].*\.$/);
    }
    for (const t of sentences(runFsdp2Eager(g, cost).reasons)) expect(t).toMatch(/^[a-zA-Z].*\.$/);
  });

  it('says what autobucketing prefetched behind, and why not with the numbers', () => {
    const prefetched = run211().reasons.find((r) => r.node === 'layers.1.p0.weight.all_gather')!;
    expect(reasonText(prefetched)).toMatch(/prefetched behind .*mm/);
    const none = run211({ max_in_flight_gb: 0 }).reasons.find((x) => x.code === 'not_prefetched_in_flight_budget');
    expect(reasonText(none!)).toMatch(/in-flight budget full \(.* > max_in_flight_gb 0/);
    const ags = run211({ max_compute_pre_fetch: 0 }).reasons.filter((x) => x.node.endsWith('all_gather'));
    for (const r of ags.filter((x) => x.code === 'prefetched'))
      expect(reasonText(r)).toMatch(/\(0 compute node\(s\) before its first use\)/);
  });

  it('says which collectives the default knobs pre-bucketed, on each of them', () => {
    const s = runAutobucketing(g, cost);
    const merged = (s.passStats ?? []).flatMap((p) => p.preBucketing?.buckets ?? []);
    expect(merged.length).toBeGreaterThan(0);
    for (const b of merged) {
      for (const m of b) {
        const worded = s.reasons.map((x) => ({ ...x, text: reasonText(x) }));
        const r = worded.find((x) => x.node === m && x.text.startsWith('pre-bucketed'));
        const want = `^pre-bucketed with ${b.length - 1} other .*one launch instead of ${b.length}\\.$`;
        expect(r?.text, m).toMatch(new RegExp(want));
      }
    }
  });

  it("words FSDP2's prefetch and flat buffers", () => {
    const s = runFsdp2Eager(g, cost);
    const prefetch = sentences(s.reasons.filter((r) => r.code === 'block_prefetch'));
    const forward = "FSDP2's implicit prefetch: issued on the all-gather stream one module ahead of layers.";
    expect(prefetch.some((t) => t.startsWith(forward))).toBe(true);
    expect(prefetch.some((t) => t.includes("next module's post-backward"))).toBe(true);
    const buckets = sentences(s.reasons.filter((r) => r.code === 'block_bucket'));
    const flat = 'FSDP2 communicates one fully_shard module as one flat buffer.';
    expect(buckets.every((t) => t.endsWith(flat))).toBe(true);
  });
});
