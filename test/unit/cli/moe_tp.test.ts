// `fsdp-sim compare` with tensor parallel on an MoE model: TP 2 × EP 2 on 8 ranks (FSDP and HSDP) runs
// every backend without an error or a hang, and counts the tp group's collectives apart.
import { describe, expect, it } from 'vitest';
import { BACKEND_NAMES } from '../../../src/backends';
import { cli } from '../../helpers/cli';

type Counts = Record<string, number>;
type Result = { backend: string; collectives: Record<string, Counts>; stepTimeMs: number; error?: string };

describe('fsdp-sim compare --model dsv3-debug --ranks 8 --tp 2 --ep 2 --ac none', () => {
  const meshes: [string, string[], object][] = [
    ['FSDP 4 × TP 2 × EP 2', [], { dp_replicate: 1, dp_shard: 4, tp: 2, ep: 2 }],
    ['HSDP 2 × 2 × TP 2 × EP 2', ['--dp-replicate', '2'], { dp_replicate: 2, dp_shard: 2, tp: 2, ep: 2 }],
  ];
  it.each(meshes)('runs every backend on %s', async (_name, extra, mesh) => {
    const flags = ['--model', 'dsv3-debug', '--ranks', '8', '--tp', '2', '--ep', '2', '--ac', 'none', ...extra];
    const size = ['--batch', '1', '--seq-len', '256', '--backends', BACKEND_NAMES.join(','), '--json'];
    const r = await cli(['compare', ...flags, ...size]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.out) as { mesh: object; results: Result[] };
    expect(json.mesh).toEqual(mesh);
    expect(json.results.map((x) => x.backend)).toEqual(BACKEND_NAMES);
    // no recompute (the preset's own selective AC re-gathers in the backward); 6 blocks (1 dense +
    // 5 MoE, ep > 1: the MoE's shared experts gather and reduce-scatter):
    // forward 6 · 2 + 1 (final norm) all-gathers and 6 · 2 + 1 (embedding) reduce-scatters,
    // each mirrored in the backward; per block 4 replicated weights' all-reduces (2 norms,
    // wkv_a, kv_norm) and the 5 MoE routers', and the final norm's
    for (const x of json.results) {
      expect(x.error).toBeUndefined();
      expect(x.stepTimeMs).toBeGreaterThan(0);
      expect(x.collectives.tp.all_gather).toBe(26);
      expect(x.collectives.tp.reduce_scatter).toBe(26);
      expect(x.collectives.ep.all_to_all).toBe(5 * 5);
    }
    expect(json.results[0].collectives.tp.all_reduce).toBe(6 * 4 + 5 + 1);
  });
});
