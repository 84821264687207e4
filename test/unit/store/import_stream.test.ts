// The app's trace import streams a picked File (File.stream(), as io_panel.tsx reads it) and gives
// the side the whole-text import gave (issue 31).
import { readFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { calibrate } from '../../../src/pipeline';
import { traceSamples } from '../../../src/pipeline/calibrate_kineto';
import { runCalibration } from '../../../src/store/calibrate_job';
import { importTraceFiles } from '../../../src/store/engine';
import { importKeep, keptBudget, readTraceStream } from '../../../src/trace';
import { CFG, kinetoFiles } from '../../helpers/kineto_synth';
import { fixturePath } from '../../helpers/fixtures';

const names: string[] = JSON.parse(readFileSync(fixturePath('hta/expected.json'), 'utf8')).trace_filter.files;

describe("the app's trace import", () => {
  it('streams picked .json.gz Files into the side the whole text gives', async () => {
    const picked = names.map((n) => new File([readFileSync(fixturePath('hta', n))], n));
    const budget = keptBudget();
    const streamed = await Promise.all(
      picked.map(async (f) => ({
        name: f.name,
        json: await readTraceStream(f.name, f.stream(), { keep: importKeep, budget }),
      })),
    );
    const unzip = (n: string) => gunzipSync(readFileSync(fixturePath('hta', n))).toString('utf8');
    const texts = names.map((n) => ({ name: n, text: unzip(n) }));
    const a = importTraceFiles(streamed);
    const b = importTraceFiles(texts);
    if (!a.ok || !b.ok) throw new Error('import failed');
    expect(a.value).toEqual(b.value);
    expect(budget.kept).toBeGreaterThan(0);
  });

  it("streams the calibration panel's files (gzip bytes) to the fit the parsed files give", async () => {
    const files = kinetoFiles(false);
    const t = traceSamples(files);
    if (!t.ok) throw t.error;
    const bytes = files.map((f) => ({ name: f.name, bytes: new Uint8Array(gzipSync(JSON.stringify(f.json))) }));
    expect(await runCalibration({ files: bytes, config: CFG })).toEqual({
      type: 'done',
      calibration: calibrate(t.value, CFG),
    });
    const cut = [{ name: 'cut.json', bytes: new TextEncoder().encode('{"traceEvents": [') }];
    expect(await runCalibration({ files: cut, config: CFG })).toEqual({
      type: 'error',
      error: expect.stringMatching(/^cut\.json is not valid JSON: it ends after 17 bytes/),
    });
  });
});
