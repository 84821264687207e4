// The mesh "Run live" trains on: the config's TP and HSDP degrees, scaled to the live workers and
// to what the tiny model (4 heads) can split; dp_shard takes the rest.
import { describe, expect, it } from 'vitest';
import { PARALLELISM_DEFAULTS } from '../../../src/config/schema';
import { liveMeshOf } from '../../../src/store/live_run';

const p = (tp: number, rep: number) => ({
  ...PARALLELISM_DEFAULTS,
  tensor_parallel_degree: tp,
  data_parallel_replicate_degree: rep,
});

describe('liveMeshOf', () => {
  it('keeps a mesh the workers can run', () => {
    expect(liveMeshOf(p(2, 1), 4)).toEqual({ dpReplicate: 1, dpShard: 2, tp: 2 });
    expect(liveMeshOf(p(2, 2), 8)).toEqual({ dpReplicate: 2, dpShard: 2, tp: 2 });
    expect(liveMeshOf(PARALLELISM_DEFAULTS, 8)).toEqual({ dpReplicate: 1, dpShard: 8, tp: 1 });
  });

  it("scales TP 8 (70b on 64 ranks) to the tiny model's 4 heads, and degrees to the workers", () => {
    expect(liveMeshOf(p(8, 1), 8)).toEqual({ dpReplicate: 1, dpShard: 2, tp: 4 });
    expect(liveMeshOf(p(8, 2), 4)).toEqual({ dpReplicate: 1, dpShard: 1, tp: 4 });
    expect(liveMeshOf(p(2, 4), 2)).toEqual({ dpReplicate: 1, dpShard: 1, tp: 2 });
  });
});
