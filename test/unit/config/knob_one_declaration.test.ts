// A knob's range is declared once: change it in its one declaration (a backend knob's row, the
// runtime's bound on live steps, a config row) and the URL codec, the CLI flags and their help,
// the config panel and the runtime all follow. Mocks modules: runs in the isolated project (vitest.config.ts).
import { afterEach, describe, expect, it, vi } from 'vitest';

const OPTIONS = '../../../src/backends/autobucketing/options';
const LIVE_OPTIONS = '../../../src/runtime/live_options';
const KNOBS = '../../../src/config/knobs';

/** The modules that read the knob, loaded fresh over the mocked declaration. */
async function readers() {
  vi.resetModules();
  return {
    config: await import('../../../src/config'),
    flags: await import('../../../src/cli/flags'),
    train: await import('../../../src/cli/train_command'),
    panel: await import('../../../src/ui/config_panel_model'),
    runtime: await import('../../../src/runtime'),
  };
}

/** The panel's help of a field. */
const panelHelp = (model: { fields: readonly { field: { path: string }; help: string }[] }[], path: string) =>
  model.flatMap((s) => s.fields).find((p) => p.field.path === path)?.help;

afterEach(() => {
  vi.doUnmock(OPTIONS);
  vi.doUnmock(LIVE_OPTIONS);
  vi.doUnmock(KNOBS);
  vi.resetModules();
});

describe('one declaration per knob', () => {
  it('a backend knob whose row says max 7: URL, --set, the panel and the backend all refuse 8', async () => {
    vi.doMock(OPTIONS, async (importOriginal) => {
      const orig = await importOriginal<typeof import('../../../src/backends/autobucketing/options')>();
      const row = { ...orig.AUTOBUCKETING_KNOBS.max_in_flight_gb, max: 7 };
      return { ...orig, AUTOBUCKETING_KNOBS: { ...orig.AUTOBUCKETING_KNOBS, max_in_flight_gb: row } };
    });
    const { config, flags, panel } = await readers();
    const path = 'autobucketing.max_in_flight_gb';
    expect(config.parseConfigQuery(`${path}=7`).errors).toEqual([]);
    expect(config.parseConfigQuery(`${path}=8`).errors[0]?.message).toBe(`${path} must be a number in [0, 7], got "8"`);
    expect(() => flags.configFromFlags('compare', { set: [`${path}=8`] })).toThrow(
      `fsdp-sim compare: --set ${path} must be a number in [0, 7], got "8"`,
    );
    expect(panelHelp(panel.configPanelModel(), path)).toContain(`${path}: a number in [0, 7]`);
    const backends = await import('../../../src/backends');
    const { resolveOptions } = await import('../../../src/backends/knob_specs');
    const knobs = backends.AUTOBUCKETING_KNOBS;
    expect(() => resolveOptions('ab', backends.AUTOBUCKETING_DEFAULTS, knobs, { max_in_flight_gb: 8 })).toThrow(
      'ab.max_in_flight_gb must be a number in [0, 7], got 8',
    );
  });

  it("the runtime's live-steps bound at 77: URL, train's flag and help, panel and planTraining follow", async () => {
    vi.doMock(LIVE_OPTIONS, async (importOriginal) => ({
      ...(await importOriginal<typeof import('../../../src/runtime/live_options')>()),
      MAX_LIVE_STEPS: 77,
    }));
    const { config, train, panel, runtime } = await readers();
    expect(config.parseConfigQuery('live.steps=77').errors).toEqual([]);
    expect(config.parseConfigQuery('live.steps=78').errors[0]?.message).toBe(
      'live.steps must be an integer in [1, 77], got "78"',
    );
    expect(() => train.parseTrainArgs(['--steps', '78'])).toThrow('--steps must be an integer in [1, 77], got "78"');
    expect(train.TRAIN_USAGE).toMatch(/--steps +an integer in \[1, 77\] \(default 50\)/);
    expect(panelHelp(panel.configPanelModel(), 'live.steps')).toContain('live.steps: an integer in [1, 77]');
    const opts = train.parseTrainArgs(['--steps', '77']).opts;
    expect(() => runtime.planTraining(opts)).not.toThrow();
    expect(() => runtime.planTraining({ ...opts, steps: 78 })).toThrow('steps must be an integer in [1, 77], got 78');
  });

  it('a config row saying jitter is at most 20 %: URL, --jitter-pct and its help, the panel follow', async () => {
    vi.doMock(KNOBS, async (importOriginal) => {
      const orig = await importOriginal<typeof import('../../../src/config/knobs')>();
      const rows = orig.CONFIG_FIELDS.map((f) => (f.path === 'jitterPct' ? { ...f, max: 20 } : f));
      return { ...orig, CONFIG_FIELDS: rows };
    });
    const { config, flags, panel } = await readers();
    expect(config.validateConfig({ jitterPct: 20 }).ok).toBe(true);
    expect(config.parseConfigQuery('jitterPct=21').errors[0]?.message).toBe(
      'jitterPct must be a number in [0, 20], got "21"',
    );
    expect(() => flags.configFromFlags('compare', { 'jitter-pct': '21' })).toThrow(
      'fsdp-sim compare: --jitter-pct must be a number in [0, 20], got "21"',
    );
    expect(flags.configFlagHelp().find((l) => l.startsWith('  --jitter-pct '))).toContain('a number in [0, 20]');
    expect(panelHelp(panel.configPanelModel(), 'jitterPct')).toContain('jitterPct: a number in [0, 20]');
  });
});
