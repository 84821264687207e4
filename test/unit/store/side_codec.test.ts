// side_codec: what the simulation worker posts (columns + JSON) unpacks to the side it packed,
// key order included, and the buffers it lists are the ones to transfer.
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../../src/config';
import { simulateConfig } from '../../../src/store/engine';
import { packEvents, packSide, repeatedBlock, unpackEvents, unpackSide } from '../../../src/store/side_codec';
import type { TraceEvent } from '../../../src/trace/event';

function sides(partial: Record<string, unknown>) {
  const r = validateConfig(partial);
  if (!r.ok) throw r.error;
  return simulateConfig(r.value);
}

describe('packSide / unpackSide', () => {
  it('round-trips simulated sides through structured clone with transferred buffers', () => {
    for (const cfg of [{}, { ranks: 8, jitterPct: 5, seed: 1 }]) {
      const { a, b } = sides(cfg);
      for (const side of [a, b]) {
        const { packed, transfer } = packSide(side);
        expect(transfer.length).toBeGreaterThan(0);
        // a symmetric side travels as one rank's block and the ranks to repeat it for
        const cols = packed.events as { n: number; repeatRanks?: readonly number[] };
        expect(cols.repeatRanks).toEqual(side.symmetric ? [...new Set(side.events.map((e) => e.rank))] : undefined);
        if (side.symmetric) expect(cols.n * cols.repeatRanks!.length).toBe(side.events.length);
        const back = unpackSide(structuredClone(packed, { transfer }));
        expect(JSON.stringify(back.events)).toBe(JSON.stringify(side.events));
        expect(back.events).toStrictEqual(side.events);
        expect(back.metrics).toStrictEqual(side.metrics);
        expect(back.memory).toStrictEqual(side.memory);
        expect(back.schedule!.buckets).toStrictEqual(side.schedule!.buckets);
        expect(back.schedule!.reasons).toStrictEqual(side.schedule!.reasons);
        // the graph is parsed on first read and is the same graph (JSON drops keys whose value is undefined)
        expect(back.schedule!.graph).toEqual(side.schedule!.graph);
        expect(back.schedule!.graph).toBe(back.schedule!.graph);
      }
    }
  });
});

describe('repeatedBlock', () => {
  const base: TraceEvent[] = [
    { rank: 0, stream: 'compute', name: 'a', kind: 'compute', start: 0, dur: 2, op: 'mm' },
    { rank: 0, stream: 'comm:dp', name: 'b', kind: 'all_gather', start: 1, dur: 3, bytes: 7, op: 'ag' },
  ];
  const copy = (r: number) => base.map((e) => ({ ...e, rank: r }));

  it('finds one rank repeated per rank', () => {
    expect(repeatedBlock([...base, ...copy(1), ...copy(5)])).toEqual({ block: base, ranks: [0, 1, 5] });
  });

  it('refuses lists whose copies differ in a value, a key or key order', () => {
    const other = copy(1);
    other[1] = { ...other[1], dur: 4 };
    expect(repeatedBlock([...base, ...other])).toBeNull();
    const reordered = copy(1);
    reordered[0] = { rank: 1, name: 'a', stream: 'compute', kind: 'compute', start: 0, dur: 2, op: 'mm' };
    expect(repeatedBlock([...base, ...reordered])).toBeNull();
    expect(repeatedBlock([...base, ...copy(1).slice(0, 1)])).toBeNull();
    expect(repeatedBlock(base)).toBeNull();
  });
});

describe('packEvents', () => {
  it('keeps absent, undefined and present optional fields apart', () => {
    const ev: TraceEvent[] = [
      { rank: 1, stream: 'compute', name: 'a', kind: 'compute', start: 0.5, dur: 2, op: 'mm' },
      {
        rank: 1,
        stream: 'comm:dp',
        name: 'b',
        kind: 'all_gather',
        start: 1,
        dur: 3,
        bytes: 7,
        op: 'ag',
        bucketId: 0,
        params: ['w'],
      },
      { rank: 2, stream: 'compute', name: 'c', kind: 'wait', start: -0, dur: 0, op: undefined },
    ];
    const back = unpackEvents(packEvents(ev)!);
    expect(back).toStrictEqual(ev);
    expect(back.map((e) => Object.keys(e))).toEqual(ev.map((e) => Object.keys(e)));
  });

  it('declines events with fields it does not know (sent as they are)', () => {
    const odd = [
      { rank: 0, stream: 'compute', name: 'a', kind: 'compute', start: 0, dur: 1, extra: 1 },
    ] as unknown as TraceEvent[];
    expect(packEvents(odd)).toBeNull();
    const { packed } = packSide({ ...sides({}).a, events: odd });
    expect(unpackSide(packed).events).toBe(odd);
  });
});
