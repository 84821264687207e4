// transformer_block on FX graphs torch traced for other checks (test/fixtures/torch_pass, the
// 2-D dump): the manual scheduler gives a valid schedule that buckets each block's parameter
// all-gathers once per graph, where the imported graph's blocks are known (graph/fx_layers.ts).
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runTransformerBlock } from '../../../src/backends';
import { importFxGraph } from '../../../src/graph';
import { gzJsonReader } from '../../helpers/torch_fixtures';
import { expectValidSchedule, rooflineCost } from './helpers';
import { fixtureUrl } from '../../helpers/fixtures';

const read = gzJsonReader(fixtureUrl(''));
const PASS = readdirSync(fixtureUrl('torch_pass/fx/'))
  .filter((f) => f.endsWith('_fw.json.gz'))
  .map((f) => `torch_pass/fx/${f.replace(/_fw\.json\.gz$/, '')}`);
const GRAPHS = [...PASS, 'fx_dump_2d/tiny_dp4_tp2'];

describe('transformer_block on imported torch graphs', () => {
  it.each(GRAPHS)('%s: a valid schedule, one all-gather bucket per block and graph', (base) => {
    const imported = importFxGraph(['fw', 'bw'].map((p) => read(`${base}_${p}.json.gz`)) as never);
    if (!imported.ok) throw imported.error;
    const g = imported.value;
    const s = runTransformerBlock(g, rooflineCost());
    expectValidSchedule(g, s);
    const layers = new Set(g.nodes.flatMap((n) => (n.layer === undefined ? [] : [n.layer])));
    const byName = new Map(g.nodes.map((n) => [n.name, n]));
    for (const phase of ['forward', 'backward']) {
      const gathers = s.buckets.filter((b) => b.kind === 'all_gather' && byName.get(b.members[0])!.phase === phase);
      const blocks = gathers.map((b) => byName.get(b.members[0])!.layer).filter((l) => l !== undefined);
      if (g.nodes.some((n) => n.phase === phase && n.kind === 'all_gather' && n.layer !== undefined)) {
        expect(new Set(blocks)).toEqual(layers);
      }
      expect(new Set(blocks).size).toBe(blocks.length);
    }
  });
});
