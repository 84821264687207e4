// A backend knob's help shows torchtitan's command line for that backend under the config's
// compile mode and knobs, one line per torchtitan version: the table compare --json reports.
import { describe, expect, it } from 'vitest';
import { defaultConfig, torchtitanFlags, type SimConfig } from '../../../src/config';
import { backendFlagsHelp } from '../../../src/ui/glossary';

const cfg = (k: Partial<SimConfig>): SimConfig => ({ ...defaultConfig(), ...k });

describe('backendFlagsHelp', () => {
  it("gives autobucketing's three spellings, Oct 2025 to graph_trainer", () => {
    const c = cfg({ backendB: 'aot_eager_autobucketing', compileMode: 'jit' });
    expect(backendFlagsHelp('backendB', c).split('\n')).toEqual([
      'torchtitan 2025-10 (experiments/simple_fsdp): --compile.enable ' +
        '--compile.model_backend_override aot_eager_autobucketing',
      'torchtitan 2025-11 (experiments/simple_fsdp): --compile.enable ' +
        '--compile.backend aot_eager --compile.graph_passes auto_bucketing',
      'torchtitan 2026 (experiments/graph_trainer): --compile.mode jit ' +
        '--compile.backend aot_eager --compile.passes auto_bucketing',
    ]);
  });

  it("follows the config: the knob's own backend, the joint graph, reshard and memory policy", () => {
    const knobs = { compileMode: 'aot_fx_trace', memoryPolicy: 'full', reshardAfterForward: 'never' } as const;
    const c = cfg({ backendA: 'aot_eager', ...knobs });
    const lines = backendFlagsHelp('backendA', c).split('\n');
    const want = torchtitanFlags('aot_eager', c);
    expect(lines).toHaveLength(want.length);
    expect(lines[0]).toMatch(/^torchtitan 2025-10 .*cannot run this: no aot_fx_trace before graph_trainer/);
    expect(lines[2]).toBe(
      'torchtitan 2026 (experiments/graph_trainer): --compile.mode aot_fx_trace --compile.disable_passes ' +
        'joint_transformer_block_bucketing_reordering_pass --parallelism.fsdp_reshard_after_forward never ' +
        '--compile.memory_policy full',
    );
    expect(backendFlagsHelp('backendB', cfg({ backendB: 'fsdp2_eager' }))).toMatch(/no compile flags \(eager\)/);
  });

  it('is empty for every other knob', () => {
    expect(backendFlagsHelp('ranks', defaultConfig())).toBe('');
    expect(backendFlagsHelp('compileMode', defaultConfig())).toBe('');
  });
});
