// Flags parsed by node:util parseArgs (strict) in every command, train included: an unknown flag,
// a missing value, a value outside an enum and a number out of range each fail in one line (exit 2)
// naming the flag and what it allows; the allowed values and the help's defaults are read from the
// declarations (config/fields.ts, the autobucketing profiles, the live-training constants).
import { describe, expect, it } from 'vitest';
import { AUTOBUCKETING_PROFILES } from '../../../src/backends';
import { CONFIG_FLAGS, configFlagHelp } from '../../../src/cli/flags';
import { TRAIN_USAGE } from '../../../src/cli/train_command';
import { CONFIG_FIELDS, DEFAULT_CONFIG, describeAllowed, fieldSpec } from '../../../src/config';
import { HARDWARE_NAMES, NETWORK_NAMES } from '../../../src/estimate';
import { MAX_LIVE_RANKS } from '../../../src/runtime/live_options';
import { cli } from '../../helpers/cli';

/** A regex matching `text` literally. */
const literal = (text: string): RegExp => new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));

/** The one line a usage error prints: exit 2, nothing on stdout. */
async function usageError(args: string[]): Promise<string> {
  const r = await cli(args);
  expect([r.code, r.out]).toEqual([2, '']);
  expect(r.err).not.toContain('\n');
  return r.err;
}

describe('an unknown flag', () => {
  it.each([['compare'], ['sweep'], ['diff'], ['train']])('%s names it and lists the valid flags', async (cmd) => {
    const err = await usageError([cmd, '--frobnicate']);
    expect(err).toMatch(new RegExp(`^fsdp-sim ${cmd}: Unknown option '--frobnicate'; valid flags: \\[--[a-z]`));
    expect(err).toContain('--help]');
  });

  it("train's valid flags are its own (no config flag it does not read)", async () => {
    const err = await usageError(['train', '--jitter-pct', '5']);
    expect(err).toMatch(/Unknown option '--jitter-pct'; valid flags: \[--model, --ranks, --tp, --ep, --dp-replicate, /);
  });
});

describe('a missing value', () => {
  it('names the flag and, for a config flag, its field’s allowed values', async () => {
    expect(await usageError(['compare', '--hardware'])).toBe(
      `fsdp-sim compare: Option '--hardware <value>' argument missing: --hardware needs a value, ` +
        `one of [${HARDWARE_NAMES.join(', ')}]`,
    );
    const jitter = describeAllowed(fieldSpec('jitterPct')!);
    expect(await usageError(['diff', '--jitter-pct'])).toMatch(literal(`--jitter-pct needs a value, ${jitter}`));
    expect(await usageError(['compare', '--set'])).toMatch(/--set needs a value, PATH=VALUE$/);
  });

  it("names a command flag's own range", async () => {
    expect(await usageError(['train', '--ranks'])).toMatch(
      literal(`--ranks needs a value, an integer in [1, ${MAX_LIVE_RANKS}]`),
    );
    expect(await usageError(['train', '--kernels'])).toMatch(/--kernels needs a value, one of \[webgpu, cpu, auto\]$/);
    expect(await usageError(['diff', '--rank'])).toMatch(/--rank needs a value, an integer in \[0, --ranks − 1\]$/);
  });
});

describe('a value outside an enum', () => {
  const network = `--network must be one of [${NETWORK_NAMES.join(', ')}], got "infiniband"`;
  it.each([
    [['compare', '--network', 'infiniband'], network],
    [['train', '--network', 'infiniband'], network],
    [['train', '--timing', 'wall'], '--timing must be one of [preset, measured], got "wall"'],
    [['diff', '--param-dtype', 'fp8'], '--param-dtype must be one of [bf16, fp32, fp16], got "fp8"'],
  ])('%j names the flag and the allowed values', async (args, message) => {
    expect(await usageError(args)).toBe(`fsdp-sim ${args[0]}: ${message}`);
  });
});

describe('a number out of range', () => {
  it.each([
    [['compare', '--jitter-pct', '51'], '--jitter-pct must be a number in [0, 50], got "51"'],
    [['train', '--lr', '2'], '--lr must be a number in (0, 1], got "2"'],
    [['train', '--lr', '0'], '--lr must be a number in (0, 1], got "0"'],
    [['train', '--every', '0'], '--every must be an integer in [1, 1000000], got "0"'],
    [['train', '--ranks', '2.5'], `--ranks must be an integer in [1, ${MAX_LIVE_RANKS}], got "2.5"`],
    [['diff', '--top', '0'], '--top must be an integer in [1, 1000000000], got "0"'],
    [['diff', '--rank', '-1'], "--rank takes a value; one that starts with '-' must be written --rank=-1"],
    [['diff', '--ranks', '4', '--rank=-1'], '--rank must be an integer in [0, 3], got "-1"'],
  ])('%j names the flag and the range', async (args, message) => {
    expect(await usageError(args)).toBe(`fsdp-sim ${args[0]}: ${message}`);
  });

  it("an autobucketing knob's range is its field's (--set PATH=VALUE)", async () => {
    const path = 'autobucketing.max_in_flight_gb';
    const err = await usageError(['compare', '--set', `${path}=-1`]);
    expect(err).toBe(`fsdp-sim compare: --set ${path} must be ${describeAllowed(fieldSpec(path)!)}, got "-1"`);
  });
});

describe('the flags and their help come from the declarations', () => {
  it('every config flag names a config field', () => {
    const paths = new Set(CONFIG_FIELDS.map((f) => f.path));
    for (const [flag, path] of Object.entries(CONFIG_FLAGS)) expect(paths.has(path), flag).toBe(true);
  });

  it("the help gives each config flag its field's allowed values and DEFAULT_CONFIG's value", () => {
    const help = configFlagHelp();
    const line = (flag: string) => help.find((l) => l.startsWith(`  --${flag} `))!;
    expect(line('ranks')).toMatch(literal(`${describeAllowed(fieldSpec('ranks')!)} (default ${DEFAULT_CONFIG.ranks})`));
    expect(line('hardware')).toContain(`(default ${DEFAULT_CONFIG.hardware})`);
    // --alignment says on|off, the words it takes, not the field's true|false
    expect(line('alignment')).toMatch(/one of \[on, off\] \(default on\)$/);
    expect(line('batch')).toMatch(/or null \(the default\)$/);
  });

  it('--torch-profile lists the profiles and names the one the defaults are', () => {
    const line = configFlagHelp().find((l) => l.startsWith('  --torch-profile '))!;
    const names = Object.keys(AUTOBUCKETING_PROFILES).map((k) => k.replace(/^torch-/, ''));
    expect(line).toContain(`one of [${names.join(', ')}]`);
    const dflt = /\(default ([\d.]+)\)$/.exec(line)?.[1];
    const knobs = AUTOBUCKETING_PROFILES[`torch-${dflt}` as keyof typeof AUTOBUCKETING_PROFILES];
    expect(knobs).toEqual(DEFAULT_CONFIG.autobucketing);
  });

  it("train's help gives each flag its range and default", async () => {
    const r = await cli(['train', '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toBe(TRAIN_USAGE);
    expect(TRAIN_USAGE).toMatch(literal(`--ranks              an integer in [1, ${MAX_LIVE_RANKS}] (default 1)`));
    expect(TRAIN_USAGE).toMatch(literal(`--hardware           one of [${HARDWARE_NAMES.join(', ')}] (default h100)`));
    expect(TRAIN_USAGE).toMatch(/--collective {9}one of \[direct, ring\] \(default direct\)/);
  });
});
