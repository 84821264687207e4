// `fsdp-sim pass` on a graph torch passed: torch's accounting in the JSON, and --torch-log agreement
// with torch's own DEBUG log (test/fixtures/torch_pass), including what a disagreement looks like.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { parseTorchPassLog } from '../../../src/backends';
import { cli } from '../../helpers/cli';
import { fixtureUrl } from '../../helpers/fixtures';

const FIX = fixtureUrl('torch_pass/');
const gz = (p: string) => gunzipSync(readFileSync(new URL(p, FIX))).toString('utf8');
const GRAPH = 'llama8b_2layer_seq2048_saved';
const dir = mkdtempSync(join(tmpdir(), 'fsdp-sim-pass-'));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const fw = file('fw.json', gz(`fx/${GRAPH}_fw.json.gz`));
const bw = file('bw.json', gz(`fx/${GRAPH}_bw.json.gz`));
const log = gz(`logs/${GRAPH}_fw.log.gz`) + gz(`logs/${GRAPH}_bw.log.gz`);

const pass = (args: string[]) => cli(['pass', ...args]);

describe('parseTorchPassLog', () => {
  it("reads torch's buckets, prefetches and summary per graph", () => {
    const graphs = parseTorchPassLog(log);
    expect(graphs).toHaveLength(2);
    const expected = JSON.parse(gz('expected.json.gz')).main[`${GRAPH}_fw`];
    expect(graphs[0].buckets).toEqual(expected.buckets);
    expect(graphs[0].overlapping).toEqual(expected.overlapping);
    expect(graphs[0].summary.total_exposed_ms).toBeCloseTo(expected.totalExposedMs, 2);
  });
});

describe('fsdp-sim pass on a torch dump', () => {
  it("prints torch's accounting, and full agreement with torch's log", async () => {
    // the reference graphs were passed with torch 2.11's knobs (test/fixtures/torch_pass)
    const torchLog = file('torch.log', log);
    const r = await pass(['--fx-graph', fw, bw, '--torch-log', torchLog, '--torch-profile', '2.11', '--json']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out);
    const expected = JSON.parse(gz('expected.json.gz')).main;
    expect(out.graphs.map((g: { phase: string }) => g.phase)).toEqual(['forward', 'backward']);
    expect(out.scheduledExposedMs).toBeCloseTo(
      expected[`${GRAPH}_fw`].totalExposedMs + expected[`${GRAPH}_bw`].totalExposedMs,
      9,
    );
    expect(out.potentialExposedMs).toBeGreaterThan(out.scheduledExposedMs);
    expect(out.reasons.length).toBeGreaterThanOrEqual(out.collectivesBefore);
    // every node carries torch's estimate in these dumps: the pass says so
    for (const g of out.graphs) expect(g.estimates.fromGraph).toBe(g.estimates.total);
    for (const a of out.agreement) {
      expect(a.bucketAgreement).toBe(1);
      expect(a.prefetchAgreement).toBe(1);
      expect(a.collectivesAfter.torch).toBe(a.collectivesAfter.fsdpSim);
      expect(a.disagreements).toEqual([]);
    }
  });

  it('names the first disagreements with both sides when the log differs', async () => {
    // drop the first bucketing decision torch logged: that candidate is now unbucketed on torch's side
    const lines = log.split('\n');
    const k = lines.findIndex((l) => /bucketed \S+ with \S+ using timeline position/.test(l));
    const moved = /bucketed (\S+) with/.exec(lines[k])![1];
    lines.splice(k, 1);
    const edited = file('edited.log', lines.join('\n'));
    const r = await pass(['--fx-graph', fw, bw, '--torch-log', edited, '--torch-profile', '2.11']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/agreement with torch's log \(forward\): buckets \d+\.\d % of pairs/);
    expect(r.out).not.toMatch(/\(forward\): buckets 100\.0 %/);
    expect(r.out).toContain(`bucket ${moved}: torch: not bucketed; fsdp-sim: bucketed with`);
  });

  it('refuses a log without pass lines, naming the flag', async () => {
    const r = await pass(['--fx-graph', fw, '--torch-log', file('empty.log', 'nothing here\n')]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--torch-log .* holds no overlap_scheduling/);
  });
});

describe('--torch-profile', () => {
  it('sets the autobucketing knobs as torch 2.13 does; --set still wins; a bad name is refused', async () => {
    const { configFromFlags } = await import('../../../src/cli/flags');
    // the default is 2.13's; 2.11 is the seed's
    const torch213 = { bucket_exposed_first: 'auto', max_off_bucket_gb: 0.5 };
    expect(configFromFlags('pass', {}).autobucketing).toMatchObject(torch213);
    const torch211 = { bucket_exposed_first: 'true', max_off_bucket_gb: 0 };
    expect(configFromFlags('pass', { 'torch-profile': '2.11' }).autobucketing).toMatchObject(torch211);
    expect(configFromFlags('pass', { 'torch-profile': '2.13' }).autobucketing).toMatchObject({
      bucket_exposed_first: 'auto',
      max_off_bucket_gb: 0.5,
    });
    const both = configFromFlags('pass', { 'torch-profile': '2.13', set: ['autobucketing.max_off_bucket_gb=2'] });
    expect(both.autobucketing.max_off_bucket_gb).toBe(2);
    const r = await pass(['--fx-graph', fw, '--torch-profile', '3.0']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--torch-profile must be one of \[2\.11, 2\.13, 2\.14, 2\.15\], got "3\.0"/);
  });
});
