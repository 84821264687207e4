// Every command line of every ```sh block of README.md and docs/*.md runs as a reader's shell runs
// it (`bash -c LINE` in the repository root): it exits 0 and its output holds one fact, the entry of
// FACTS under the line. A line with no entry fails, so a new command cannot slip in untested; the
// few that cannot run here are in NOT_RUN, each with the reason.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandOf, docFiles, fences, readDoc, ROOT, runLine, shCommands } from './markdown';

const SIM = 'npm run -s sim --';
const HTA = 'test/fixtures/hta/sampled_rank-0.json.gz test/fixtures/hta/sampled_rank-1.json.gz';
const FX = 'test/fixtures/fx/tiny_4layer_fw.json test/fixtures/fx/tiny_4layer_bw.json';
const FX2D = 'test/fixtures/fx_dump_2d/tiny_dp4_tp2_fw.json.gz test/fixtures/fx_dump_2d/tiny_dp4_tp2_bw.json.gz';
const KINETO = 'test/fixtures/kineto/rank0.pt.trace.json test/fixtures/kineto/rank1.pt.trace.json';
const TORCH_PASS = 'test/fixtures/torch_pass';
const TRACE_DIR = 'artifacts/docs_trace';

/** The lines the docs show that this test does not run, and why. */
const NOT_RUN: Readonly<Record<string, string>> = {
  'npm ci && npm start':
    'npm ci reinstalls node_modules under the running tests, and npm start serves until stopped: ' +
    'test/e2e/readme_start.test.ts runs `npm start` and checks that the app answers with COOP and COEP',
  'npm test': 'the whole suite, which CI runs (.ci/run): run from inside it, it would run itself',
};

/** One fact of each command's output (stdout, then stderr): a pattern it must match. */
const FACTS: Readonly<Record<string, RegExp>> = {
  [`${SIM} compare --model llama3-8b --ranks 8 --hardware h100`]: /^aot_eager_autobucketing\s+978\.51\s/m,
  [`${SIM} sweep --model small --ranks 8 --vary bandwidthGBps=10,40,160`]: /^160\s+aot_eager_autobucketing\s/m,
  [`${SIM} diff --model small --ranks 8 --top 3`]:
    /^rank 0: \d+ collectives; exposed [\d.]+ (µs|ms|s) under aot_eager,/,
  [`${SIM} pass --fx-graph ${FX}`]: /^collectives:\s+87 → 3 \(3 buckets\)$/m,
  [`${SIM} train --model tiny --ranks 2 --steps 5`]: /^step\s+1\s+loss 5\.5462\s/m,
  [`${SIM} analyze ${HTA}`]: /^0\s+600\.058\s+11\.81\s+53\.56\s+17\.71\s+28\.74\s/m,
  [`${SIM} calibrate ${HTA} --model llama3-8b --ranks 128`]: /^default\s+128\s+12\s/m,
  'node bin/fsdp-sim.mjs help': /^usage: fsdp-sim <command> \[flags\]$/m,
  // docs/fidelity.md
  [`${SIM} pass --fx-graph ${TORCH_PASS}/fx/llama8b_2layer_seq2048_saved_fw.json.gz --torch-profile 2.11 ` +
    `--torch-log ${TORCH_PASS}/logs/llama8b_2layer_seq2048_saved_fw.log.gz`]:
    /agreement with torch's log \(forward\): buckets 100\.0 % of pairs, prefetches 100\.0 %/,
  [`${SIM} pass --fx-graph ${FX2D} --json`]: /"collectivesBefore":\s*55\b/,
  [`${SIM} analyze ${HTA} --json`]: /"rank": 1,\s+"overlapPct": 20\.05/,
  [`${SIM} compare --model tiny --ranks 2 --trace ${TRACE_DIR} --per-rank`]: new RegExp(
    `^traces: ${TRACE_DIR}/aot_eager/rank\\*\\.pt\\.trace\\.json`,
    'm',
  ),
  [`${SIM} analyze ${TRACE_DIR}/aot_eager/rank0.pt.trace.json ${TRACE_DIR}/aot_eager/rank1.pt.trace.json`]:
    /^1\s+[\d.]+\s+0\.00\s/m, // aot_eager overlaps nothing, on rank 1 too
  // docs/meshes.md
  [`${SIM} compare --model small --ranks 8 --tp 2 --json`]: /"mesh":\{"dp_replicate":1,"dp_shard":4,"tp":2\}/,
  [`${SIM} compare --model small --ranks 8 --dp-replicate 2`]: /\(HSDP 2 × 4\)/,
  // docs/live_training.md
  [`${SIM} train --model tiny --ranks 4 --tp 2 --steps 1`]: /^training tiny on 4 rank\(s\) \(FSDP 2 × TP 2\)/,
  // docs/testing.md
  'npx vitest run --config vitest.config.ts test/unit/util/format.test.ts': /Test Files\s+1 passed/,
  // docs/workbench.md
  [`${SIM} sweep --model small --vary ranks=8:32:8 --vary autobucketing.max_in_flight_gb=0.5,5 --csv`]:
    /^32,5,aot_eager_autobucketing,/m,
  [`${SIM} diff --model small --ranks 8 --straggler-rank 2 --straggler-factor 2 --top 1`]:
    /^aot_eager: rank 2 holds the others up: they wait [\d.]+ µs for it over \d+ collectives/m,
  [`${SIM} calibrate ${KINETO} --model tiny --ranks 2 --json`]: /"unfitted":\[\{"group":"0","groupSize":2,/,
};

const commands = shCommands();

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

/** Links to files of the repository (and their #anchors) that do not resolve. */
function brokenLinks(file: string): string[] {
  const text = readDoc(file);
  const targets = [...text.matchAll(/\]\(([^)\s]+)\)|src="([^"]+)"/g)].map((m) => m[1] ?? m[2]);
  return targets
    .filter((t) => !/^[a-z]+:/.test(t))
    .filter((t) => {
      const [path, anchor] = t.split('#');
      const target = path === '' ? file : join(dirname(file), path);
      if (!existsSync(join(ROOT, target))) return true;
      if (anchor === undefined) return false;
      const headings = readDoc(target)
        .split('\n')
        .filter((l) => l.startsWith('#'));
      return !headings.some((h) => slug(h.replace(/^#+\s*/, '')) === anchor);
    })
    .map((t) => `${file}: ${t}`);
}

describe('the commands the docs show', () => {
  it('open the README: its first lines are npm ci && npm start, then npm test, both package scripts', () => {
    const first = fences(readDoc('README.md'))[0];
    expect(first.lang).toBe('sh');
    expect(first.start).toBeLessThanOrEqual(3);
    expect(first.lines.map(commandOf)).toEqual(['npm ci && npm start', 'npm test']);
    const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts;
    expect(scripts.start).toMatch(/vite preview --host 127\.0\.0\.1 --port 4173 --strictPort$/);
    expect(scripts.test).toMatch(/^npm run typecheck && npm run lint && /);
    expect(existsSync(join(ROOT, 'test/e2e/readme_start.test.ts')), 'the test that runs npm start').toBe(true);
  });

  it('sit beside links that resolve: every file and heading a doc links to exists', () => {
    expect(docFiles().flatMap(brokenLinks)).toEqual([]);
  });

  it('each have a fact to check (or a reason not to run), and every fact a command in the docs', () => {
    const untested = commands.filter((c) => !(c.command in FACTS) && !(c.command in NOT_RUN));
    expect(untested.map((c) => `${c.file}: ${c.command}`)).toEqual([]);
    const shown = new Set(commands.map((c) => c.command));
    expect(Object.keys(FACTS).filter((c) => !shown.has(c))).toEqual([]);
    expect(Object.keys(NOT_RUN).filter((c) => !shown.has(c))).toEqual([]);
  });

  // In reading order, each line once: a command may read what one above it wrote (compare --trace,
  // then analyze).
  const first = (c: { command: string }, i: number) => commands.findIndex((d) => d.command === c.command) === i;
  const once = commands.filter((c, i) => c.command in FACTS && first(c, i));
  for (const { file, command } of once) {
    it(`${file}: ${command}`, () => {
      const r = runLine(command);
      expect(r.status, `${command}\n${r.stderr}`).toBe(0);
      expect(`${r.stdout}\n${r.stderr}`).toMatch(FACTS[command]);
    }, 60_000);
  }
});
