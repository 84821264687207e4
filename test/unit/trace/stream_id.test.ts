// trace/stream.ts: a stream's identity and its name in traces, the one place either is made or
// read: names round-trip, unknown text names no stream, and the hot-loop tests agree with streamOf.
import { describe, expect, it } from 'vitest';
import { COMPUTE_STREAM, commGroupOf, commStream, isCommStream, sideStream, streamOf } from '../../../src/trace';
import { parseStream, streamName, type StreamId } from '../../../src/trace/stream';

describe('stream identities', () => {
  it('name each kind of stream as traces carry it, and read the name back', () => {
    const ids: StreamId[] = [
      { kind: 'compute' },
      { kind: 'comm', group: 'dp_shard' },
      { kind: 'side', name: 'ag_copy_in' },
    ];
    expect(ids.map(streamName)).toEqual(['compute', 'comm:dp_shard', 'side:ag_copy_in']);
    for (const id of ids) expect(streamOf(streamName(id))).toEqual(id);
    expect([COMPUTE_STREAM, commStream('tp'), sideStream('x')]).toEqual(['compute', 'comm:tp', 'side:x']);
  });

  it('keep a group name with a colon whole', () => {
    expect(streamOf(commStream('a:b'))).toEqual({ kind: 'comm', group: 'a:b' });
  });

  it('find no stream in other text', () => {
    for (const s of ['', 'Compute', 'nccl:dp', 'comm', 'side']) expect(parseStream(s)).toBeUndefined();
  });

  it('isCommStream and commGroupOf agree with streamOf', () => {
    for (const s of [COMPUTE_STREAM, commStream('dp'), sideStream('dp'), commStream('')]) {
      const id = streamOf(s);
      expect(isCommStream(s)).toBe(id.kind === 'comm');
      expect(commGroupOf(s)).toBe(id.kind === 'comm' ? id.group : undefined);
    }
  });
});
