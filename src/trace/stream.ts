// Stream identities: which stream of a rank an event ran on, as a typed value. A trace names a
// stream by text ('compute', 'comm:<group>', 'side:<name>': event.ts StreamName, the name the
// Chrome trace and the UI's lane labels carry); this file is the one place that text is made
// (streamName) and read (streamOf), so no caller parses a prefix (docs/ARCHITECTURE.md §5).

import type { StreamName } from './event';

/** The compute stream, one comm stream per process group, or a side stream a backend names. */
export type StreamId =
  | { readonly kind: 'compute' }
  | { readonly kind: 'comm'; readonly group: string }
  | { readonly kind: 'side'; readonly name: string };

export const COMPUTE_STREAM: StreamName = 'compute';

const COMM = 'comm:';
const SIDE = 'side:';

/** The stream's name in traces and on screen. */
export function streamName(id: StreamId): StreamName {
  switch (id.kind) {
    case 'compute':
      return COMPUTE_STREAM;
    case 'comm':
      return `${COMM}${id.group}`;
    case 'side':
      return `${SIDE}${id.name}`;
  }
}

export const commStream = (group: string): StreamName => streamName({ kind: 'comm', group });
export const sideStream = (name: string): StreamName => streamName({ kind: 'side', name });

const COMPUTE_ID: StreamId = { kind: 'compute' };

/** The identity a stream name stands for; undefined for text that names no stream. */
export function parseStream(s: string): StreamId | undefined {
  if (s === COMPUTE_STREAM) return COMPUTE_ID;
  if (s.startsWith(COMM)) return { kind: 'comm', group: s.slice(COMM.length) };
  if (s.startsWith(SIDE)) return { kind: 'side', name: s.slice(SIDE.length) };
  return undefined;
}

/** The identity of a stream name (StreamName's type guarantees one). */
export function streamOf(s: StreamName): StreamId {
  return parseStream(s) as StreamId;
}

// per-event tests on hot loops (lanes, exposure per group): no object made

/** Is `s` a process group's comm stream? */
export const isCommStream = (s: StreamName): boolean => s.startsWith(COMM);

/** The process group of a comm stream; undefined for the compute and side streams. */
export function commGroupOf(s: StreamName): string | undefined {
  return s.startsWith(COMM) ? s.slice(COMM.length) : undefined;
}
