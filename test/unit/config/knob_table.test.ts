// Each knob is declared once (config/knobs.ts; the backend's knobs in backends/autobucketing/
// options.ts; the live run's choices and bounds in runtime/live_options.ts): the rows are
// self-consistent, everything else reads them, and no file in src/ holds a second table of knobs —
// a knob name as a key, a value or an element of an object or array literal outside the table.
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { AUTOBUCKETING_DEFAULTS, AUTOBUCKETING_KNOBS, type KnobSpec } from '../../../src/backends';
import { CONFIG_FLAGS, GRAPH_SHAPE_FLAGS, configFlagHelp } from '../../../src/cli/flags';
import { TRAIN_USAGE, parseTrainArgs } from '../../../src/cli/train_command';
import {
  CONFIG_FIELDS,
  DEFAULT_CONFIG,
  describeAllowed,
  fieldSpec,
  getPath,
  isAllowed,
  validateConfig,
  type FieldSpec,
} from '../../../src/config';
import { planTraining } from '../../../src/runtime';
import {
  COLLECTIVE_ALGORITHMS,
  KERNEL_CHOICES,
  MAX_LIVE_STEPS,
  MAX_SEED,
  TIMING_MODES,
} from '../../../src/runtime/index_options';
import { knobHelp } from '../../../src/ui/glossary';
import { configPanelModel } from '../../../src/ui/config_panel_model';

const ROOT = join(__dirname, '../../..');

/** The rows' allowed values without their path, as a command flag's rule is written. */
const ruleOf = (f: FieldSpec) => {
  const { path: _p, label: _l, group: _g, default: _d, trainDefault: _t, help: _h, flag: _f, ...rest } = f;
  const { flagWords: _w, graphShape: _s, ...rule } = rest;
  return rule;
};

describe('the knob table', () => {
  it("gives every row a default its own rule allows, train's default too", () => {
    for (const f of CONFIG_FIELDS) {
      expect(isAllowed(f, f.default), f.path).toBe(true);
      if (f.trainDefault !== undefined) expect(isAllowed(f, f.trainDefault), f.path).toBe(true);
      expect(f.help.does, f.path).toMatch(/^\S/);
    }
  });

  it('makes DEFAULT_CONFIG of the rows: one leaf per row, each its default, and it validates', () => {
    const leaves = (o: object): number =>
      Object.values(o).reduce((n: number, v) => n + (v !== null && typeof v === 'object' ? leaves(v) : 1), 0);
    expect(leaves(DEFAULT_CONFIG)).toBe(CONFIG_FIELDS.length);
    for (const f of CONFIG_FIELDS) expect(getPath(DEFAULT_CONFIG, f.path), f.path).toBe(f.default);
    expect(validateConfig(DEFAULT_CONFIG).ok).toBe(true);
  });

  it("takes the backend knobs' range, integer-ness, help and default from the backend's rows", () => {
    for (const [key, spec] of Object.entries(AUTOBUCKETING_KNOBS) as [string, KnobSpec][]) {
      const f = fieldSpec(`autobucketing.${key}`)!;
      expect(f.default, key).toBe(AUTOBUCKETING_DEFAULTS[key as keyof typeof AUTOBUCKETING_DEFAULTS]);
      expect(f.help, key).toBe(spec.help);
      if (spec.type !== 'number') continue;
      expect([f.kind, 'min' in f && f.min, 'max' in f && f.max], key).toEqual([
        spec.integer ? 'int' : 'number',
        spec.min,
        spec.max,
      ]);
    }
    // the disagreements the one row settled: a finite range, integers where torch counts
    expect(describeAllowed(fieldSpec('autobucketing.max_in_flight_gb')!)).toBe('a number in [0, 1024]');
    expect(fieldSpec('autobucketing.max_compute_pre_fetch')!.kind).toBe('int');
  });

  it("takes the live run's choices and bounds from the runtime's own lists", () => {
    expect(ruleOf(fieldSpec('live.kernels')!)).toEqual({ kind: 'enum', values: KERNEL_CHOICES });
    expect(ruleOf(fieldSpec('live.collectiveAlgorithm')!)).toEqual({ kind: 'enum', values: COLLECTIVE_ALGORITHMS });
    expect(ruleOf(fieldSpec('live.timing')!)).toEqual({ kind: 'enum', values: TIMING_MODES });
    expect(ruleOf(fieldSpec('live.steps')!)).toEqual({ kind: 'int', min: 1, max: MAX_LIVE_STEPS });
    expect(ruleOf(fieldSpec('seed')!)).toEqual({ kind: 'int', min: 0, max: MAX_SEED });
    expect(MAX_SEED).toBe(0xffffffff); // seeds are uint32, as the PRNGs read them
  });

  it('gives the glossary and the panel the help of the row', () => {
    for (const f of CONFIG_FIELDS) expect(knobHelp(f.path), f.path).toBe(f.help);
    const shown = configPanelModel().flatMap((s) => s.fields);
    expect(shown.map((p) => p.field)).toEqual(expect.arrayContaining([...CONFIG_FIELDS]));
    expect(shown).toHaveLength(CONFIG_FIELDS.length);
    for (const p of shown) expect(p.help, p.field.path).toContain(`${p.field.path}: ${describeAllowed(p.field)}`);
  });
});

describe('the command line reads the rows', () => {
  it('has a flag for each row that names one, and only those', () => {
    const flagged = CONFIG_FIELDS.filter((f) => f.flag !== undefined);
    expect(CONFIG_FLAGS).toEqual(Object.fromEntries(flagged.map((f) => [f.flag, f.path])));
    expect(GRAPH_SHAPE_FLAGS).toEqual(flagged.filter((f) => f.graphShape).map((f) => f.flag));
    expect(configFlagHelp().find((l) => l.startsWith('  --seed '))).toContain('an integer in [0, 4294967295]');
  });

  it("train's knob flags take the row's range and choices; its defaults are the row's train defaults", () => {
    const line = (flag: string) => TRAIN_USAGE.split('\n').find((l) => l.startsWith(`  --${flag} `))!;
    const allowed = (path: string) => describeAllowed(fieldSpec(path)!);
    const trainDefault = (path: string) => fieldSpec(path)!.trainDefault;
    expect(line('steps')).toContain(`${allowed('live.steps')} (default ${trainDefault('live.steps')})`);
    expect(line('kernels')).toContain(`${allowed('live.kernels')} (default ${trainDefault('live.kernels')})`);
    expect(line('seed')).toContain(`${allowed('seed')} (default ${DEFAULT_CONFIG.seed})`);
    expect(line('timing')).toContain(allowed('live.timing'));
    const defaults = parseTrainArgs([]).opts;
    expect([defaults.steps, defaults.kernels]).toEqual([50, 'cpu']);
    expect(DEFAULT_CONFIG.live.steps).toBe(10); // the app's run: short, on purpose
  });

  it('the top of the steps and seed ranges is taken by train, the runtime and the URL alike', () => {
    const top = parseTrainArgs(['--steps', String(MAX_LIVE_STEPS), '--seed', String(MAX_SEED)]).opts;
    expect(() => planTraining(top)).not.toThrow();
    expect(() => parseTrainArgs(['--steps', String(MAX_LIVE_STEPS + 1)])).toThrow(`[1, ${MAX_LIVE_STEPS}]`);
    expect(validateConfig({ seed: MAX_SEED, live: { steps: MAX_LIVE_STEPS } }).ok).toBe(true);
    expect(validateConfig({ seed: MAX_SEED + 1 }).ok).toBe(false);
  });
});

/** Every .ts / .tsx file under src/, relative to the repository. */
function sources(dir = join(ROOT, 'src')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return /\.tsx?$/.test(e.name) ? [relative(ROOT, p)] : [];
  });
}

/** The names a second table would use: dotted config paths, the backend knobs' torch names. */
const KNOB_NAMES: ReadonlySet<string> = new Set([
  ...CONFIG_FIELDS.map((f) => f.path).filter((p) => p.includes('.')),
  ...Object.keys(AUTOBUCKETING_KNOBS),
]);

/** Where knob names may sit in literals: the two tables, and uses that name a field (not a declaration). */
const ALLOWED: Readonly<Record<string, string>> = {
  'src/config/knobs.ts': 'the table',
  'src/backends/autobucketing/options.ts': "the backend's rows and its profiles (values by torch version)",
  'src/config/parallelism.ts': 'the fields a mesh error names (MeshFields), not a declaration',
};

/** `file:line name` for each knob name that is a key, a value or an element of a literal. */
function tableEntries(file: string, text = readFileSync(join(ROOT, file), 'utf8')): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (n: ts.Node): void => {
    const literal = ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n);
    if ((literal || ts.isIdentifier(n)) && KNOB_NAMES.has(n.text)) {
      const p = n.parent;
      const key = ts.isPropertyAssignment(p) && p.name === n && ts.isObjectLiteralExpression(p.parent);
      const value = literal && ts.isPropertyAssignment(p) && p.initializer === n;
      const element = literal && ts.isArrayLiteralExpression(p);
      const line = sf.getLineAndCharacterOfPosition(n.getStart()).line + 1;
      if (key || value || element) found.push(`${file}:${line} ${n.text}`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return found;
}

describe('no second declaration', () => {
  it('finds no knob name in an object or array literal outside the table', () => {
    const files = sources().filter((f) => !Object.hasOwn(ALLOWED, f));
    expect(files.length).toBeGreaterThan(100);
    expect(files.flatMap((f) => tableEntries(f))).toEqual([]);
  });

  it('would find the tables this replaced (an integer list, a range table, a flag map, a help table)', () => {
    const old = [
      "const INT_KNOBS = new Set(['max_compute_pre_fetch']);",
      'const RANGES = { max_in_flight_gb: { min: 0, max: 1024 } };',
      "const FLAGS = { 'straggler-rank': 'straggler.rank' };",
      "const HELP = { 'live.steps': { does: 'Training steps' } };",
    ];
    expect(tableEntries('old.ts', old.join('\n'))).toEqual([
      'old.ts:1 max_compute_pre_fetch',
      'old.ts:2 max_in_flight_gb',
      'old.ts:3 straggler.rank',
      'old.ts:4 live.steps',
    ]);
    // a use is not a declaration: a field named in a call or read off the config
    expect(tableEntries('use.ts', "fieldSpec('live.steps'); cfg.autobucketing.max_in_flight_gb;")).toEqual([]);
  });

  it('lets config import the runtime only through its options entry', () => {
    const config = sources().filter((f) => f.startsWith('src/config/'));
    for (const f of config) {
      const text = readFileSync(join(ROOT, f), 'utf8');
      const imports = [...text.matchAll(/from '(\.\.\/runtime[^']*)'/g)].map((m) => m[1]);
      for (const i of imports) expect(i, f).toBe('../runtime/index_options');
    }
  });
});
