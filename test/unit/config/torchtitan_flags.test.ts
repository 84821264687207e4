// torchtitan's command line per backend, compile mode and torchtitan version: the table, and
// `fsdp-sim compare --json`'s torchtitanFlags built from it for the config it ran.
import { describe, expect, it } from 'vitest';
import { BACKEND_NAMES } from '../../../src/backends/schedule_types';
import { main } from '../../../src/cli/cli';
import { TORCHTITAN_VERSIONS, torchtitanFlags } from '../../../src/config/torchtitan_flags';
import { MEMORY_POLICIES } from '../../../src/graph';

const JIT = { compileMode: 'jit', reshardAfterForward: 'default', memoryPolicy: 'default' } as const;
const NEVER_FULL = { compileMode: 'aot_fx_trace', reshardAfterForward: 'never', memoryPolicy: 'full' } as const;
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
    // torchtitan's core trainer captures CUDA graphs since Aug 2026 (PR #3559): jit's default has none
    expect(torchtitanFlags('fsdp2_eager', JIT).map((e) => e.flags)).toEqual(['', '', '--training.disable_cuda_graphs']);
    const graphed = torchtitanFlags('fsdp2_eager', { ...JIT, cudaGraphs: 'on' });
    expect(graphed.map((e) => e.flags)).toEqual([null, null, '']);
    expect(graphed[0].why).toMatch(/PR #3559/);
  });

  it('aot_fx_trace exists only in 2026 graph_trainer, and adds the non-default reshard and memory policy', () => {
    const f = torchtitanFlags('aot_eager', NEVER_FULL);
    expect(f.filter((e) => e.flags === null).map((e) => e.version)).toEqual(['2025-10', '2025-11']);
    expect(f[0].why).toMatch(/aot_fx_trace/);
    expect(flagsAt(f, '2026')).toBe(
      '--compile.mode aot_fx_trace --compile.disable_passes joint_transformer_block_bucketing_reordering_pass' +
        ' --parallelism.fsdp_reshard_after_forward never --compile.memory_policy full',
    );
    expect(flagsAt(torchtitanFlags('fsdp2_eager', { ...JIT, compileMode: 'aot_fx_trace' }), '2026')).toBeNull();
    const always = torchtitanFlags('aot_eager', { ...JIT, reshardAfterForward: 'always' });
    expect(flagsAt(always, '2026')).not.toContain('reshard');
  });

  it("runs graph_trainer's default pass list for transformer_block, and has no auto_bucketing in aot_fx_trace", () => {
    const aot = { ...JIT, compileMode: 'aot_fx_trace' } as const;
    expect(flagsAt(torchtitanFlags('transformer_block', aot), '2026')).toBe('--compile.mode aot_fx_trace');
    const auto = torchtitanFlags('aot_eager_autobucketing', aot);
    expect(flagsAt(auto, '2026')).toBeNull();
    expect(auto[2].why).toMatch(/jit mode only/);
    // graph_trainer's memory policies are default|full|eager|sac_and_offload: none (PR #2961's) is gone
    const none = torchtitanFlags('transformer_block', { ...aot, memoryPolicy: 'none' });
    expect(flagsAt(none, '2026')).toBeNull();
  });

  it("emits graph_trainer's --compile.memory_policy for each of its policies, and no command for 'none'", () => {
    const aot = { ...JIT, compileMode: 'aot_fx_trace' } as const;
    const at = (memoryPolicy: (typeof MEMORY_POLICIES)[number]) =>
      flagsAt(torchtitanFlags('transformer_block', { ...aot, memoryPolicy }), '2026');
    const want: Record<(typeof MEMORY_POLICIES)[number], string | null> = {
      default: '--compile.mode aot_fx_trace',
      full: '--compile.mode aot_fx_trace --compile.memory_policy full',
      eager: '--compile.mode aot_fx_trace --compile.memory_policy eager',
      sac_and_offload: '--compile.mode aot_fx_trace --compile.memory_policy sac_and_offload',
      none: null,
    };
    for (const p of MEMORY_POLICIES) expect(at(p), p).toBe(want[p]);
    // jit never names a memory policy (activation_checkpoint.mode decides there)
    expect(
      flagsAt(torchtitanFlags('transformer_block', { ...JIT, memoryPolicy: 'sac_and_offload' }), '2026'),
    ).not.toContain('memory_policy');
  });

  it('drops cudagraph_pass when CUDA graphs are off, and asks for the FSDP overlap passes when on', () => {
    const aot = { ...JIT, compileMode: 'aot_fx_trace' } as const;
    const off = torchtitanFlags('aot_eager', { ...aot, cudaGraphs: 'off', fsdpAgRsOverlap: true });
    expect(flagsAt(off, '2026')).toBe(
      '--compile.mode aot_fx_trace --compile.disable_passes joint_transformer_block_bucketing_reordering_pass,' +
        'cudagraph_pass --compile.enable_fsdp_ag_rs_overlap',
    );
    const block = torchtitanFlags('transformer_block', { ...aot, cudaGraphs: 'off' });
    expect(flagsAt(block, '2026')).toBe('--compile.mode aot_fx_trace --compile.disable_passes cudagraph_pass');
    const dense = { ...aot, fsdpDenseRegionOverlap: true };
    expect(flagsAt(torchtitanFlags('transformer_block', dense), '2026')).toBe(
      '--compile.mode aot_fx_trace --compile.enable_fsdp_dense_region_overlap',
    );
    expect(flagsAt(torchtitanFlags('aot_eager', dense), '2026')).not.toMatch(/dense_region/);
    // jit runs no cudagraph_pass and no reassign_collective_pgs_pass
    expect(flagsAt(torchtitanFlags('aot_eager', { ...JIT, fsdpAgRsOverlap: true }), '2026')).not.toMatch(/overlap/);
    const jitGraphs = torchtitanFlags('aot_eager', { ...JIT, cudaGraphs: 'on' });
    expect(jitGraphs.map((e) => e.flags)).toEqual([null, null, null]);
  });

  it('asks for --compile.ep_overlap.* on the traced backends, each field only where it is not the default', () => {
    const aot = { ...JIT, compileMode: 'aot_fx_trace' } as const;
    const ep = { enabled: true, chunkDim: 'batch', strategy: 'graph', moduleFqn: 'layers.*' } as const;
    expect(flagsAt(torchtitanFlags('transformer_block', { ...aot, epOverlap: ep }), '2026')).toBe(
      '--compile.mode aot_fx_trace --compile.ep_overlap.enabled',
    );
    const moe = { ...ep, chunkDim: 'seq', strategy: 'eager', moduleFqn: 'layers.*.moe' } as const;
    expect(flagsAt(torchtitanFlags('transformer_block', { ...aot, epOverlap: moe }), '2026')).toBe(
      '--compile.mode aot_fx_trace --compile.ep_overlap.enabled --compile.ep_overlap.chunk_dim seq' +
        ' --compile.ep_overlap.strategy eager --compile.ep_overlap.module_fqn layers.*.moe',
    );
    expect(flagsAt(torchtitanFlags('aot_eager', { ...aot, epOverlap: ep }), '2026')).toMatch(/ep_overlap\.enabled$/);
    expect(
      flagsAt(torchtitanFlags('transformer_block', { ...aot, epOverlap: { ...moe, enabled: false } }), '2026'),
    ).toBe('--compile.mode aot_fx_trace');
  });

  it('is in compare --json, one list per backend compared, for the config compared', async () => {
    const { code, json } = await compareJson(['--set', 'compileMode=aot_fx_trace', '--set', 'cudaGraphs=off']);
    expect(code).toBe(0);
    expect(Object.keys(json.torchtitanFlags)).toEqual(json.results.map((r: { backend: string }) => r.backend));
    expect(flagsAt(json.torchtitanFlags.aot_eager, '2026')).toBe(
      '--compile.mode aot_fx_trace --compile.disable_passes joint_transformer_block_bucketing_reordering_pass,' +
        'cudagraph_pass',
    );
  }, 60_000);
});
