// createCommInit validation and single-rank RankComm on this thread (Node's main thread may block).

import { afterEach, describe, expect, it, vi } from 'vitest';
import { RankComm, createCommInit } from '../../../src/runtime/comm';
import { CollectiveError, ConfigError } from '../../../src/errors';
import { LATENCY_AREA_BYTES } from '../../../src/runtime/comm/layout';

afterEach(() => vi.restoreAllMocks());

describe('createCommInit', () => {
  it('sizes the data buffer as 4·n²·maxElemsPerRank bytes plus two latency areas of at most LATENCY_AREA_BYTES', () => {
    const init = createCommInit(4, 100);
    expect(init.data.byteLength).toBe(4 * 16 * 100 * 3); // small: each latency area holds the largest footprint
    const big = createCommInit(2, 2 ** 20); // n²·M = 4 Mi elems: the areas stop at LATENCY_AREA_BYTES
    expect(big.data.byteLength).toBe(4 * 4 * 2 ** 20 + 2 * LATENCY_AREA_BYTES);
    expect(init).toMatchObject({ worldSize: 4, maxElemsPerRank: 100, algorithm: 'direct' });
  });

  it('names the field, value and valid set for a bad algorithm, world size or timeout', () => {
    expect(() => createCommInit(2, 1, { algorithm: 'tree' as never })).toThrow(ConfigError);
    expect(() => createCommInit(2, 1, { algorithm: 'tree' as never })).toThrow(
      'algorithm must be one of [direct, ring], got "tree"',
    );
    expect(() => createCommInit(0, 1)).toThrow('worldSize must be an integer ≥ 1, got 0');
    expect(() => createCommInit(2, 1, { timeoutMs: 0 })).toThrow('timeoutMs must be > 0, got 0');
  });

  it('is plain data that survives structured cloning with its buffers shared', () => {
    const init = createCommInit(2, 4);
    const copy = structuredClone(init);
    new Float32Array(copy.data)[3] = 7;
    expect(new Float32Array(init.data)[3]).toBe(7);
  });
});

describe('RankComm', () => {
  it('rejects a rank outside the world and a control buffer from another world size', () => {
    expect(() => new RankComm(createCommInit(2, 1), 2)).toThrow('rank must be an integer in [0, 1], got 2');
    const a = createCommInit(2, 1);
    const b = createCommInit(3, 1);
    expect(() => new RankComm({ ...a, control: b.control }, 0)).toThrow(/does not belong to a 2-rank communicator/);
  });

  it('says where to run it when Atomics.wait is forbidden (browser main thread)', () => {
    vi.spyOn(Atomics, 'wait').mockImplementation(() => {
      throw new TypeError('Atomics.wait cannot be called in this context');
    });
    expect(() => new RankComm(createCommInit(1, 1), 0)).toThrow(CollectiveError);
    expect(() => new RankComm(createCommInit(1, 1), 0)).toThrow(
      /dedicated Web Workers or Node worker_threads, never on a browser main thread/,
    );
  });

  for (const algorithm of ['direct', 'ring'] as const) {
    it(`is the identity on a single rank (${algorithm})`, () => {
      const comm = new RankComm(createCommInit(1, 3, { algorithm }), 0);
      const x = new Float32Array([1.5, -2, 3]);
      const ag = new Float32Array(3);
      const rs = new Float32Array(3);
      comm.allGather({ label: 'ag', tensors: ['w'] }, x, ag);
      comm.reduceScatter({ label: 'rs', tensors: ['w'] }, x, rs, 'avg');
      comm.barrier('end');
      expect(Array.from(ag)).toEqual([1.5, -2, 3]);
      expect(Array.from(rs)).toEqual([1.5, -2, 3]);
      expect(comm.nextSeq).toBe(3);
    });
  }

  it('refuses every collective after an abort, naming the aborting rank and reason', () => {
    const comm = new RankComm(createCommInit(1, 1), 0);
    comm.abort('user pressed stop');
    expect(() => comm.barrier('x')).toThrow(
      "collective aborted by rank 0 (rank 0 was in barrier([x]) 'x'): user pressed stop",
    );
  });

  it('rejects a reduce_scatter input that is not worldSize × output', () => {
    const comm = new RankComm(createCommInit(1, 4), 0);
    expect(() =>
      comm.reduceScatter({ label: 'rs', tensors: ['g'] }, new Float32Array(3), new Float32Array(2), 'sum'),
    ).toThrow("reduce_scatter 'rs' on rank 0: input has 3 elems, expected worldSize × output = 1 × 2");
  });
});
