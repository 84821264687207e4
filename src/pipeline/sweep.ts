// Parameter sweeps: the cross product of values of any config fields (by dotted path, as the URL and
// `--set` name them), each point simulated under each backend. Pure: the CLI runs it in Node, the
// app in a worker. Follows the sweep tables of Calculon / vTrain: one row per point and backend.

import {
  CONFIG_FIELDS,
  configToQuery,
  describeAllowed,
  getPath,
  hbmFit,
  parseConfigQuery,
  type FieldSpec,
  stepConfigOf,
  type SimConfig,
} from '../config';
import type { BackendName } from '../backends';
import { ConfigError, oneOfMessage } from '../errors';
import { resolveStepConfig } from '../graph';
import { MODEL_PRESETS } from '../model';
import type { CollectiveMismatch } from '../sim';
import { LruCache } from '../util';
import { csvOf } from './csv';
import { stepFigures } from './figures';
import { backendOptions, buildGraph, runPipelineOnGraph } from './run';

/** One varied field and its values, as text (what a URL or a flag holds), in sweep order. */
export interface SweepAxis {
  readonly path: string;
  readonly values: readonly string[];
}

/** A point of the sweep: the value of each axis, and the full config it gives. */
export interface SweepPoint {
  readonly index: number;
  readonly values: Readonly<Record<string, string | number | boolean | null>>;
  readonly config: SimConfig;
}

/** One row: a point under one backend (what the CLI prints and the app plots). */
export interface SweepRow {
  readonly point: number;
  readonly values: Readonly<Record<string, string | number | boolean | null>>;
  readonly backend: BackendName;
  readonly stepTimeMs: number;
  readonly exposedCommMs: number;
  readonly overlapPct: number;
  /** Live graph tensors at their peak (simulated clock), bytes. */
  readonly peakMemoryBytes: number;
  /** torch.cuda.max_memory_reserved of rank 0's schedule, bytes (what the HBM check uses). */
  readonly peakReservedBytes: number;
  readonly allGathers: number;
  readonly reduceScatters: number;
  readonly fitsHbm: boolean;
  /** Set when the ranks disagreed on a collective (a hang): the times are then NaN (src/words/ words it). */
  readonly hang?: CollectiveMismatch;
}

/** More points than this is a typo (`0:1e6:1`), not a sweep: refuse before simulating anything. */
export const MAX_SWEEP_POINTS = 10_000;

/** A list as a message quotes it: whole up to 80 characters, else its start and its length. */
const shortList = (text: string): string =>
  text.length <= 80 ? text : `${text.slice(0, 60)}… (${text.length} characters)`;

/** Values of a range `a:b:step`, b included (within 1e-9 of a step, so 0:1:0.1 ends at 1). */
function rangeValues(f: FieldSpec, text: string): string[] {
  const parts = text.split(':');
  const nums = parts.map(Number);
  if (parts.length !== 3 || parts.some((p) => p.trim() === '') || nums.some((n) => !Number.isFinite(n)))
    throw new ConfigError(f.path, `${f.path}: a range must be a:b:step with three numbers, got '${text}'`);
  const [a, b, step] = nums;
  if (!(step > 0)) throw new ConfigError(f.path, `${f.path}: a range's step must be > 0, got ${step} in '${text}'`);
  if (b < a) throw new ConfigError(f.path, `${f.path}: a range a:b:step needs a ≤ b, got '${text}'`);
  const n = Math.floor((b - a) / step + 1e-9) + 1;
  if (n > MAX_SWEEP_POINTS)
    throw new ConfigError(f.path, `${f.path}: '${text}' has ${n} values, more than ${MAX_SWEEP_POINTS}`);
  // a + i·step, rounded to 12 significant digits so 0.1 steps print as 0.3, not 0.30000000000000004
  const values = Array.from({ length: n }, (_, i) => String(Number((a + i * step).toPrecision(12))));
  const distinct = new Set(values).size;
  if (distinct < n)
    throw new ConfigError(
      f.path,
      `${f.path}: the range '${text}' has ${n} points but ${distinct} distinct value(s) at 12 significant digits; ` +
        'use a larger step',
    );
  return values;
}

/** The field of a path, or a ConfigError listing the valid paths. */
function sweepField(path: string): FieldSpec {
  const f = CONFIG_FIELDS.find((x) => x.path === path);
  if (!f)
    throw new ConfigError(
      path,
      oneOfMessage(
        '--vary field',
        CONFIG_FIELDS.map((x) => x.path),
        path,
      ),
    );
  return f;
}

/** `path=v1,v2,...` or `path=a:b:step` (numeric fields) → an axis (values checked later, per point). */
export function parseVary(spec: string): SweepAxis {
  const eq = spec.indexOf('=');
  if (eq <= 0 || eq === spec.length - 1)
    throw new ConfigError(
      'vary',
      `--vary must be PATH=V1,V2,... or PATH=A:B:STEP (e.g. autobucketing.max_in_flight_gb=0.5,1,2), got '${spec}'`,
    );
  const f = sweepField(spec.slice(0, eq));
  const text = spec.slice(eq + 1);
  if (text.includes(':')) {
    if (f.kind !== 'int' && f.kind !== 'number')
      throw new ConfigError(
        f.path,
        `${f.path}: ranges a:b:step apply to numeric fields; ${f.path} is ${describeAllowed(f)}`,
      );
    return { path: f.path, values: rangeValues(f, text) };
  }
  const values = text.split(',').map((s) => s.trim());
  // the cap first, then a linear duplicate check: a link may carry any number of values
  if (values.length > MAX_SWEEP_POINTS)
    throw new ConfigError(f.path, `${f.path}: the list has ${values.length} values, more than ${MAX_SWEEP_POINTS}`);
  if (values.some((v) => v === '')) throw new ConfigError(f.path, `${f.path}: an empty value in the list '${text}'`);
  const seen = new Set<string>();
  const twice = values.find((v) => seen.size === seen.add(v).size);
  if (twice !== undefined)
    throw new ConfigError(f.path, `${f.path}: '${twice}' is listed twice in '${shortList(text)}'`);
  return { path: f.path, values };
}

/** The cross product of the axes over `base`, first axis slowest; every value is validated first. */
export function sweepPoints(base: SimConfig, axes: readonly SweepAxis[]): SweepPoint[] {
  const seen = new Set<string>();
  for (const a of axes) {
    if (seen.has(a.path)) throw new ConfigError(a.path, `${a.path} is varied twice; give one --vary per field`);
    seen.add(a.path);
  }
  const total = axes.reduce((n, a) => n * a.values.length, 1);
  if (total > MAX_SWEEP_POINTS)
    throw new ConfigError(axes[0]?.path ?? 'vary', `the sweep has ${total} points, more than ${MAX_SWEEP_POINTS}`);
  const baseQuery = configToQuery(base);
  const points = Array.from({ length: total }, (_, index): SweepPoint => {
    const q = new URLSearchParams(baseQuery);
    let rest = index;
    // the last axis varies fastest: index = ((i0·n1 + i1)·n2 + i2)...
    for (let k = axes.length - 1; k >= 0; k--) {
      const a = axes[k];
      q.set(a.path, a.values[rest % a.values.length]);
      rest = Math.floor(rest / a.values.length);
    }
    const { config, errors } = parseConfigQuery(q.toString());
    if (errors.length) throw errors[0]; // names the field, the value and what is allowed
    const values = Object.fromEntries(axes.map((a) => [a.path, getPath(config, a.path)])) as SweepRow['values'];
    return { index, values, config };
  });
  checkStepConfigs(points);
  return points;
}

/**
 * What only the step graph checks (tp against the model's heads, kv heads, ffn, vocabulary and
 * tokens), for every point before any runs: a sweep never fails half-way on a value it was given.
 */
function checkStepConfigs(points: readonly SweepPoint[]): void {
  const seen = new Set<string>();
  for (const p of points) {
    const step = stepConfigOf(p.config);
    const key = JSON.stringify(step);
    if (seen.has(key)) continue;
    seen.add(key);
    try {
      resolveStepConfig(step);
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      const at = Object.entries(p.values)
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(', ');
      throw new ConfigError(e.field, `point ${p.index} (${at}): ${e.message}`);
    }
  }
}

/** What a run yields, without the point it belongs to. */
type RunFigures = Omit<SweepRow, 'point' | 'values' | 'backend'>;

/**
 * Memo of a sweep: graphs by step config, runs by everything a run depends on. A backend without
 * knobs (aot_eager) gives the same run at every value of an autobucketing knob, so a knob sweep
 * simulates it once; points that share a step config share its graph.
 */
export interface SweepCache {
  /** At most `maxGraphs` of newSweepCache, least recently used evicted (a 405B graph is tens of MB). */
  readonly graphs: LruCache<string, ReturnType<typeof buildGraph>>;
  readonly runs: Map<string, RunFigures>;
}

/** Step graphs a sweep keeps: enough for the last axis's values to share theirs, bounded in memory. */
export const MAX_SWEEP_GRAPHS = 8;

export const newSweepCache = (maxGraphs = MAX_SWEEP_GRAPHS): SweepCache => ({
  graphs: new LruCache(Math.max(1, maxGraphs)),
  runs: new Map(),
});

/** The graph of a step config, from the cache (made most recent) or built, evicting the least recent. */
function cachedGraph(cache: SweepCache, cfg: SimConfig): ReturnType<typeof buildGraph> {
  return cache.graphs.getOrCompute(JSON.stringify(stepConfigOf(cfg)), () => buildGraph(cfg));
}

/** The config as one backend's run sees it: its own knobs only; which backends A/B are is not an input. */
function runKey(cfg: SimConfig, backend: BackendName): string {
  const { backendA: _a, backendB: _b, live: _l, ...rest } = cfg;
  return JSON.stringify({
    ...rest,
    autobucketing: backendOptions(cfg, backend),
    backend,
  });
}

function runFigures(p: SweepPoint, backend: BackendName, cache: SweepCache): RunFigures {
  const graph = cachedGraph(cache, p.config);
  // metrics need every rank (stragglers), the rows never the events: draw one
  const r = runPipelineOnGraph(graph, p.config, backend, { shownRanks: 1 });
  if (r.sim.mismatch) return { ...NAN_ROW, hang: r.sim.mismatch };
  const fig = stepFigures(r);
  const m = r.metrics;
  return {
    stepTimeMs: m.stepTimeUs / 1000,
    exposedCommMs: m.exposedCommUs / 1000,
    overlapPct: m.overlapPct,
    peakMemoryBytes: m.peakMemoryBytes,
    peakReservedBytes: fig.peakReservedBytes,
    allGathers: m.collectives.all_gather,
    reduceScatters: m.collectives.reduce_scatter,
    fitsHbm: hbmFit(fig.peakReservedBytes, p.config.hardware).fits,
  };
}

/** One point under each backend. */
export function runSweepPoint(
  p: SweepPoint,
  backends: readonly BackendName[],
  cache: SweepCache = newSweepCache(),
): SweepRow[] {
  return backends.map((backend) => {
    const key = runKey(p.config, backend);
    let figures = cache.runs.get(key);
    if (!figures) cache.runs.set(key, (figures = runFigures(p, backend, cache)));
    return { point: p.index, values: p.values, backend, ...figures };
  });
}

const NAN_ROW = {
  stepTimeMs: Number.NaN,
  exposedCommMs: Number.NaN,
  overlapPct: Number.NaN,
  peakMemoryBytes: Number.NaN,
  peakReservedBytes: Number.NaN,
  allGathers: 0,
  reduceScatters: 0,
  fitsHbm: false,
} as const;

/**
 * Estimated seconds per layer of one backend's run on one point: graph, schedule and simulation
 * grow with the layers (llama3-405b, 126 layers: ~1.1 s under aot_eager); runs whose ranks differ
 * (jitter, a straggler) simulate every rank, ×(1 + ranks/16).
 */
export const SECONDS_PER_LAYER_RUN = 0.009;

/** Estimated seconds to run `points` under `backends` (what the CLI's budget is checked against). */
export function sweepSeconds(points: readonly SweepPoint[], backends: readonly BackendName[]): number {
  let s = 0;
  for (const p of points) {
    const c = p.config;
    const asymmetric = c.jitterPct > 0 || c.straggler.rank !== null;
    s += MODEL_PRESETS[c.model].nLayers * (asymmetric ? 1 + c.ranks / 16 : 1);
  }
  return s * backends.length * SECONDS_PER_LAYER_RUN;
}

/**
 * Every point under every backend (or the backends `backends(point)` names), in point order;
 * `onPoint(done, total)` after each point.
 */
export function runSweepPoints(
  points: readonly SweepPoint[],
  backends: readonly BackendName[] | ((p: SweepPoint) => readonly BackendName[]),
  onPoint?: (done: number, total: number) => void,
): SweepRow[] {
  const cache = newSweepCache();
  return points.flatMap((p, k) => {
    const rows = runSweepPoint(p, typeof backends === 'function' ? backends(p) : backends, cache);
    onPoint?.(k + 1, points.length);
    return rows;
  });
}

/** Every point of the axes' cross product under every backend, in point order. */
export function runSweep(base: SimConfig, axes: readonly SweepAxis[], backends: readonly BackendName[]): SweepRow[] {
  return runSweepPoints(sweepPoints(base, axes), backends);
}

/** The CSV columns after the axes' own. */
export const SWEEP_COLUMNS = [
  'backend',
  'stepTimeMs',
  'exposedCommMs',
  'overlapPct',
  'peakMemoryBytes',
  'peakReservedBytes',
  'allGathers',
  'reduceScatters',
  'fitsHbm',
  'error',
] as const;

/**
 * The rows as CSV: one column per axis, then SWEEP_COLUMNS; a header line first. `error` is a
 * hang's sentence, from `word` (src/words/ `mismatchText`).
 */
export function sweepCsv(
  axes: readonly Pick<SweepAxis, 'path'>[],
  rows: readonly SweepRow[],
  word: (m: CollectiveMismatch) => string,
): string {
  const cell = (r: SweepRow, c: (typeof SWEEP_COLUMNS)[number]) =>
    c === 'error' ? (r.hang ? word(r.hang) : undefined) : r[c];
  return csvOf(
    [...axes.map((a) => a.path), ...SWEEP_COLUMNS],
    rows.map((r) => [...axes.map((a) => r.values[a.path]), ...SWEEP_COLUMNS.map((c) => cell(r, c))]),
  );
}
