// graph/mesh.ts resolveMesh: the one place degrees become a mesh (config, CLI and live runs),
// -1 as torchtitan's "the rest", and errors naming the caller's own field for each degree.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors';
import { resolveMesh, type MeshFields } from '../../../src/graph';

const F: MeshFields = { dpReplicate: 'rep', dpShard: 'shard', tp: 'tp' };

describe('resolveMesh', () => {
  it('gives dp_shard -1 the ranks the other degrees leave, and keeps explicit degrees', () => {
    expect(resolveMesh(16, { dpReplicate: 2, dpShard: -1, tp: 2 }, F)).toEqual({ dpReplicate: 2, dpShard: 4, tp: 2 });
    expect(resolveMesh(8, { dpReplicate: 1, dpShard: 4, tp: 2 }, F)).toEqual({ dpReplicate: 1, dpShard: 4, tp: 2 });
  });

  it('names the field the caller gave each degree', () => {
    const rest = () => resolveMesh(6, { dpReplicate: 1, dpShard: -1, tp: 4 }, F);
    expect(rest).toThrow(ConfigError);
    expect(rest).toThrow('tp · rep (4 · 1) must divide ranks (6): shard -1 takes the rest of the ranks');
    const product = () => resolveMesh(8, { dpReplicate: 1, dpShard: 2, tp: 2 }, F);
    expect(product).toThrow('shard · rep · tp must equal ranks (8), got 2 · 1 · 2 = 4 (or set shard -1: the rest)');
    for (const s of [0, -2]) {
      try {
        resolveMesh(8, { dpReplicate: 1, dpShard: s, tp: 1 }, F);
        expect.unreachable();
      } catch (e) {
        expect((e as ConfigError).field).toBe('shard');
      }
    }
  });
});
