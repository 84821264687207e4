// `npm run bench`: runs the benchmark sections, each figure beside a baseline measured in the same
// run, prints one table (with the machine and adapters named) and writes bench/results/latest.json.
//   npm run bench -- --only matmul,scale     pick sections (matmul, comm, scale, timeline, training, startup, trace,
//                                            sweep, calibrate, stream)
//   npm run bench -- --adapters compat       matmul and startup adapters (swiftshader, compat)
//   npm run bench -- --full                  bigger cases (2048³ on SwiftShader, 256 MB on 8 ranks…)
//   npm run bench -- --only scale405 --torch-profile 2.13
//                                            only the 405b × 1024 rows (the 1 s target), autobucketing under
//                                            that torch profile (default: the backend's default knobs)

import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { ViteDevServer } from 'vite';
import { CHROMIUM_PATH } from '../chromium.config';
import { startServer, type Adapter } from './browser';
import { benchCalibrate } from './calibrate';
import { benchComm } from './comm';
import { benchMatmul } from './matmul';
import type { TorchProfile } from '../src/backends/autobucketing/options';
import { benchScale, benchScale405 } from './scale';
import { benchStartup } from './startup';
import { machine, printTable, type Row } from './stats';
import { benchSweep } from './sweep';
import { benchTimeline } from './timeline';
import { benchTraceImport } from './trace_import';
import { benchTraceStream } from './trace_stream';
import { benchTraining } from './training';

const SECTIONS = [
  'matmul',
  'comm',
  'scale',
  'scale405',
  'timeline',
  'training',
  'startup',
  'trace',
  'sweep',
  'calibrate',
  'stream',
] as const;
// what runs without --only: scale405's rows are in scale already
const DEFAULT_SECTIONS = SECTIONS.filter((s) => s !== 'scale405');
const PROFILES: readonly string[] = ['2.11', '2.13'];
type Section = (typeof SECTIONS)[number];
const ADAPTERS: readonly Adapter[] = ['swiftshader', 'compat'];

interface Args {
  readonly only: readonly Section[];
  readonly adapters: readonly Adapter[];
  readonly full: boolean;
  readonly profile?: TorchProfile;
}

function listArg<T extends string>(flag: string, raw: string | undefined, valid: readonly T[]): T[] {
  const xs = (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const x of xs) {
    if (!(valid as readonly string[]).includes(x))
      throw new Error(`${flag} must list values from [${valid.join(', ')}], got '${x}'`);
  }
  return xs as T[];
}

/** The flags, read by node:util's parseArgs (strict: an unknown flag or a missing value is an error). */
function readArgs(argv: readonly string[]): Args {
  const options = {
    only: { type: 'string' },
    adapters: { type: 'string' },
    full: { type: 'boolean' },
    'torch-profile': { type: 'string' },
  } as const;
  let values: { only?: string; adapters?: string; full?: boolean; 'torch-profile'?: string };
  try {
    ({ values } = parseArgs({ args: [...argv], options, strict: true }));
  } catch (e) {
    const valid = `valid: --only <${SECTIONS.join(',')}>, --adapters <${ADAPTERS.join(',')}>, --full, --torch-profile <2.11|2.13>`;
    throw new Error(`${(e as Error).message.split('\n')[0]}; ${valid}`);
  }
  const profile = values['torch-profile'];
  if (profile !== undefined && !PROFILES.includes(profile))
    throw new Error(`--torch-profile must be one of [${PROFILES.join(', ')}], got '${profile}'`);
  return {
    only: values.only === undefined ? [...DEFAULT_SECTIONS] : listArg('--only', values.only, SECTIONS),
    adapters: values.adapters === undefined ? [...ADAPTERS] : listArg('--adapters', values.adapters, ADAPTERS),
    full: !!values.full,
    ...(profile !== undefined ? { profile: `torch-${profile}` as TorchProfile } : {}),
  };
}

async function main(): Promise<void> {
  const args = readArgs(process.argv.slice(2));
  const t0 = performance.now();
  const rows: Row[] = [];
  const details: Record<string, unknown> = {};
  const sectionMs: Record<string, number> = {};
  const browserSections: readonly Section[] = ['matmul', 'comm', 'timeline', 'training', 'startup'];
  const needsBrowser = args.only.some((s) => browserSections.includes(s));
  let server: ViteDevServer | undefined;
  let url = '';
  const log = (s: string) => process.stderr.write(`[bench] ${s}\n`);
  try {
    if (needsBrowser) ({ url, server } = await startServer());
    for (const section of SECTIONS) {
      if (!args.only.includes(section)) continue;
      const s0 = performance.now();
      log(`${section}…`);
      try {
        if (section === 'matmul') {
          const r = await benchMatmul(url, args.adapters, args.full);
          rows.push(...r.rows);
          details.matmul = r.results;
        } else if (section === 'comm') {
          const r = await benchComm(url, args.full, log);
          rows.push(...r.rows);
          details.comm = r.records;
        } else if (section === 'scale') {
          const r = benchScale(args.profile);
          rows.push(...r.rows);
          details.scale = r.records;
        } else if (section === 'scale405') {
          const r = benchScale405(args.profile);
          rows.push(...r.rows);
          details.scale405 = r.records;
        } else if (section === 'timeline') {
          const r = await benchTimeline(url);
          rows.push(...r.rows);
          details.timeline = r.records;
        } else if (section === 'sweep') {
          const r = benchSweep();
          rows.push(...r.rows);
          details.sweep = r.records;
        } else if (section === 'calibrate') {
          const r = benchCalibrate();
          rows.push(...r.rows);
          details.calibrate = r.records;
        } else if (section === 'startup') {
          const r = await benchStartup(url, args.adapters, log);
          rows.push(...r.rows);
          details.startup = r.records;
        } else if (section === 'stream') {
          const r = benchTraceStream(args.full, log);
          rows.push(...r.rows);
          details.stream = r.records;
        } else if (section === 'trace') {
          const r = benchTraceImport();
          rows.push(...r.rows);
          details.trace = r.records;
        } else {
          const r = await benchTraining(url, args.full, log);
          rows.push(...r.rows);
          details.training = r.records;
        }
      } catch (e) {
        const msg = e instanceof Error ? e.message : String(e);
        log(`${section} FAILED: ${msg}`);
        rows.push({
          section,
          case: 'section failed',
          value: msg.slice(0, 160),
          baseline: '',
          ratio: '',
          target: 'runs',
          met: false,
        });
      }
      sectionMs[section] = performance.now() - s0;
      log(`${section} done in ${(sectionMs[section] / 1000).toFixed(1)} s`);
    }
  } finally {
    await server?.close();
  }
  const m = machine();
  const totalS = (performance.now() - t0) / 1000;
  const seen = (details.matmul ?? {}) as Partial<Record<Adapter, { adapter: string }>>;
  const adapterText = args.adapters.map((a) => (seen[a] ? `${a} = ${seen[a]!.adapter}` : a)).join('; ');
  const head =
    `machine: ${m.cpu}, ${m.cores} cores, ${m.memGiB} GiB, node ${m.node}, ${m.platform}; ` +
    `adapters (headless Chromium ${CHROMIUM_PATH}): ${adapterText}; total ${totalS.toFixed(0)} s`;
  const table = printTable(rows);
  process.stdout.write(`${head}\n\n${table}\n\n`);
  const met = rows.filter((r) => r.met !== null);
  process.stdout.write(`targets met: ${met.filter((r) => r.met).length}/${met.length}\n`);
  const dir = new URL('./results/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    new URL('latest.json', dir),
    JSON.stringify(
      {
        date: new Date().toISOString(),
        machine: m,
        args,
        totalS,
        sectionMs,
        rows,
        details,
      },
      null,
      1,
    ),
  );
  process.stdout.write(`wrote bench/results/latest.json\n`);
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
