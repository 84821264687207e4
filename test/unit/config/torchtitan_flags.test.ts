// torchtitan's command line per backend, compile mode and torchtitan version: the table, and
// `fsdp-sim compare --json`'s torchtitanFlags built from it for the config it ran.
import { describe, expect, it } from 'vitest';
import { BACKEND_NAMES } from '../../../src/backends/schedule_types';
import { main } from '../../../src/cli/cli';
import { TORCHTITAN_VERSIONS, torchtitanFlags } from '../../../src/config/torchtitan_flags';

const JIT = { compileMode: 'jit', reshardAfterForward: 'default', memoryPolicy: 'default' } as const;
const NEVER_NONE = { compileMode: 'aot_fx_trace', reshardAfterForward: 'never', memoryPolicy: 'none' } as const;
const flagsAt = (f: ReturnType<typeof torchtitanFlags>, v: string) => f.find((x) => x.version === v)?.flags;

async function compareJson(args: string[]) {
  const out: string[] = [];
  const code = await main(['compare', '--json', ...args], { out: (t) => void out.push(t), err: () => {} });
  return { code, json: JSON.parse(out.join('\n')) };
}

describe('torchtitanFlags', () => {
  it('gives the autobucketing backend as each torchtitan spelled it', () => {
    const f = torchtitanFlags('aot_eager_autobucketing', JIT);
    expect(f.map((x) => x.version)).toEqual([...TORCHTITAN_VERSIONS]);
    expect(flagsAt(f, '2025-10')).toContain('--compile.model_backend_override aot_eager_autobucketing');
    expect(flagsAt(f, '2025-11')).toContain('--compile.backend aot_eager --compile.graph_passes auto_bucketing');
    expect(flagsAt(f, '2026')).toBe('--compile.mode jit --compile.backend aot_eager --compile.passes auto_bucketing');
  });

  it('has an entry for every backend and version; FSDP2 eager needs no compile flag', () => {
    for (const b of BACKEND_NAMES) {
      for (const e of torchtitanFlags(b, JIT)) expect(typeof e.flags, `${b} ${e.version}`).toBe('string');
    }
    expect(torchtitanFlags('fsdp2_eager', JIT).map((e) => e.flags)).toEqual(['', '', '']);
  });

  it('aot_fx_trace exists only in 2026 graph_trainer, and adds the non-default reshard and memory policy', () => {
    const f = torchtitanFlags('aot_eager', NEVER_NONE);
    expect(f.filter((e) => e.flags === null).map((e) => e.version)).toEqual(['2025-10', '2025-11']);
    expect(f[0].why).toMatch(/aot_fx_trace/);
    expect(flagsAt(f, '2026')).toBe(
      '--compile.mode aot_fx_trace --compile.backend aot_eager'
        + ' --parallelism.fsdp_reshard_after_forward never --compile.memory_policy none');
    expect(flagsAt(torchtitanFlags('fsdp2_eager', { ...JIT, compileMode: 'aot_fx_trace' }), '2026')).toBeNull();
    const always = torchtitanFlags('aot_eager', { ...JIT, reshardAfterForward: 'always' });
    expect(flagsAt(always, '2026')).not.toContain('reshard');
  });

  it('is in compare --json, one list per backend compared, for the config compared', async () => {
    const { code, json } = await compareJson(['--set', 'compileMode=aot_fx_trace', '--set', 'memoryPolicy=none']);
    expect(code).toBe(0);
    expect(Object.keys(json.torchtitanFlags)).toEqual(json.results.map((r: { backend: string }) => r.backend));
    expect(flagsAt(json.torchtitanFlags.aot_eager_autobucketing, '2026')).toBe(
      '--compile.mode aot_fx_trace --compile.backend aot_eager --compile.passes auto_bucketing'
        + ' --compile.memory_policy none');
  }, 60_000);
});
