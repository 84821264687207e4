// `fsdp-sim compare` on an MoE model with expert parallel: --ep, the mesh in the JSON, the ep
// group's all-to-alls counted apart, and the errors naming the field.
import { describe, expect, it } from 'vitest';
import { cli } from '../../helpers/cli';

type Counts = Record<string, number>;
type Result = { collectives: Record<string, Counts>; collectivesTotal: Counts; stepTimeMs: number };

describe('fsdp-sim compare --model moe-tiny --ep 2', () => {
  it('simulates the step on FSDP 4 × EP 2 and counts the all-to-alls on ep', async () => {
    const r = await cli(['compare', '--model', 'moe-tiny', '--ranks', '4', '--ep', '2', '--json']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.out) as { mesh: object; results: Result[] };
    expect(json.mesh).toEqual({ dp_replicate: 1, dp_shard: 4, tp: 1, ep: 2 });
    for (const x of json.results) {
      // one MoE block: counts, dispatch and combine forward; combine and dispatch backward
      expect(x.collectives.ep.all_to_all).toBe(5);
      expect(x.collectivesTotal.all_to_all).toBe(5);
      expect(Object.keys(x.collectives).sort()).toEqual(['dp', 'efsdp', 'ep']);
      expect(x.stepTimeMs).toBeGreaterThan(0);
    }
    const text = await cli(['compare', '--model', 'moe-tiny', '--ranks', '4', '--ep', '2']);
    expect(text.out).toContain('FSDP 4 × EP 2');
    expect(text.out).toMatch(/aot_eager: .*ep: 5 A2A \(exposed [\d.]+ ms\)/); // the per-group line
  });

  it('refuses --ep on a dense model, naming the flag', async () => {
    const r = await cli(['compare', '--model', 'tiny', '--ranks', '4', '--ep', '2']);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('--ep (2) needs an MoE model'); // the CLI names its flag
  });
});
