// `fsdp-sim calibrate` on synthetic rank files written to disk (gzip for one): the fitted α, β and
// scales printed, as JSON and as a table, and errors naming the file; on fsdp-sim's own export of
// a run with a pure α-β ring (the α, β it was given come back), and on HTA's real sample (the
// group it fits, and the reason for the kernels it leaves out).
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from '../../helpers/cli';
import { ALPHA_US, BETA, SCALES, kinetoFiles } from '../../helpers/kineto_synth';
import { fixturePath } from '../../helpers/fixtures';

const dir = mkdtempSync(join(tmpdir(), 'fsdp-calib-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fsdp-sim calibrate', () => {
  const [r0, r1] = kinetoFiles(false);
  const p0 = join(dir, 'rank0.pt.trace.json');
  const p1 = join(dir, 'rank1.pt.trace.json.gz');
  writeFileSync(p0, JSON.stringify(r0.json));
  writeFileSync(p1, gzipSync(JSON.stringify(r1.json)));

  it('prints the fit as JSON, recovering the run within 2 %', async () => {
    const r = await cli(['calibrate', p0, p1, '--model', 'small', '--ranks', '4', '--json']);
    expect([r.code, r.err]).toEqual([0, '']);
    const j = JSON.parse(r.out) as {
      groups: { alphaUs: number; betaBytesPerS: number; points: unknown[] }[];
      scales: { cls: keyof typeof SCALES; scale: number }[];
      skipped: number;
    };
    expect(j.groups).toHaveLength(1);
    expect(Math.abs(j.groups[0].alphaUs / ALPHA_US - 1)).toBeLessThan(0.02);
    expect(Math.abs(j.groups[0].betaBytesPerS / BETA - 1)).toBeLessThan(0.02);
    for (const s of j.scales) expect(Math.abs(s.scale / SCALES[s.cls] - 1)).toBeLessThan(0.02);
    expect(j.skipped).toBe(2);
  });

  it('prints a table with the flags that simulate the fitted ring', async () => {
    const r = await cli(['calibrate', p0, p1, '--model', 'small', '--ranks', '4']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^process group\s+n\s+collectives/);
    expect(r.out).toMatch(/\n0\s+4\s+\d+\s+3\.9\d\d|\n0\s+4\s+\d+\s+4\.0\d\d/);
    expect(r.out).toMatch(
      /to simulate with the fitted ring: --latency-us [\d.]+ --bandwidth-gbps (49\.\d+|50(\.\d+)?)/,
    );
  });

  it("recovers the α and β of fsdp-sim's own export (merged and per-rank files) and its compute scales", async () => {
    const ring = ['--network', 'pcie-ethernet', '--latency-us', '3', '--bandwidth-gbps', '80'];
    const run = ['--model', 'small', '--ranks', '2', ...ring];
    const out = join(dir, 'own');
    expect((await cli(['compare', ...run, '--backends', 'aot_eager', '--trace', out])).code).toBe(0);
    expect((await cli(['compare', ...run, '--backends', 'aot_eager', '--per-rank', '--trace', out])).code).toBe(0);
    const ranks = readdirSync(join(out, 'aot_eager')).map((f) => join(out, 'aot_eager', f));
    for (const files of [[join(out, 'aot_eager.trace.json')], ranks]) {
      const r = await cli(['calibrate', ...files, ...run, '--json']);
      expect([r.code, r.err]).toEqual([0, '']);
      const j = JSON.parse(r.out) as {
        groups: { group: string; groupSize: number; alphaUs: number; betaBytesPerS: number }[];
        scales: { scale: number }[];
        unfitted: unknown[];
      };
      expect(j.groups.map((g) => [g.group, g.groupSize])).toEqual([['dp', 2]]);
      expect(j.groups[0].alphaUs).toBeCloseTo(3, 3); // the export rounds times to the ns
      expect(j.groups[0].betaBytesPerS / 80e9).toBeCloseTo(1, 4);
      for (const s of j.scales) expect(s.scale).toBeCloseTo(1, 4);
      expect(j.unfitted).toEqual([]);
    }
  });

  it("fits HTA's real sample from its nccl:* ops and says why it leaves its all-to-alls out", async () => {
    const hta = [0, 1].map((r) => fixturePath('hta', `sampled_rank-${r}.json.gz`));
    const r = await cli(['calibrate', ...hta, '--ranks', '128']);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out).toMatch(/\ndefault\s+128\s+12\s+[\d.]+\s+[\d.]+ /);
    expect(r.out).toContain("\nnot fitted:\n  group 'default' (all_to_all ×8): no ring model for it here");
    expect(r.out).toContain("notes:\n  group 'default': the trace records no process group or 'Group size'");
    const two = await cli(['calibrate', ...hta, '--ranks', '2']);
    expect([two.code, two.err]).toEqual([
      1,
      "fsdp-sim calibrate: the trace's distributedInfo.world_size is 128 but the config has ranks = 2: " +
        "calibrate against the run's config (--ranks 128)",
    ]);
  });

  it('names a file that cannot be read or is not a trace', async () => {
    const missing = await cli(['calibrate', join(dir, 'nope.json')]);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/cannot read '.*nope\.json': ENOENT/);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"x": 1}');
    const r = await cli(['calibrate', bad]);
    expect([r.code, r.err]).toEqual([1, `fsdp-sim calibrate: ${bad}: not a Kineto trace (no traceEvents array)`]);
    expect((await cli(['calibrate'])).err).toMatch(/give at least one trace FILE/);
  });
});
