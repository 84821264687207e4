// Field readers for trace import: each checks one JSON field and throws an ImportError naming
// where it is (`file[1].traceEvents[12].ts`), the value found and what was expected.

import { ImportError, preview } from '../errors';

export type Json = Record<string, unknown>;

export const isObject = (x: unknown): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x);

// depth-limited: a 100k-deep value in a trace must give this message, not a RangeError
const show = (x: unknown): string => (x === undefined ? 'undefined' : preview(x, 60));

export function fail(where: string, expected: string, got: unknown): never {
  throw new ImportError(where, `${where} must be ${expected}, got ${show(got)}`);
}

export function readObject(o: Json, key: string, where: string): Json {
  const v = o[key];
  return isObject(v) ? v : fail(`${where}.${key}`, 'an object', v);
}

export function readString(o: Json, key: string, where: string): string {
  const v = o[key];
  return typeof v === 'string' ? v : fail(`${where}.${key}`, 'a string', v);
}

export function readNumber(o: Json, key: string, where: string, min = -Infinity): number {
  const v = o[key];
  return typeof v === 'number' && Number.isFinite(v) && v >= min
    ? v
    : fail(`${where}.${key}`, min === -Infinity ? 'a finite number' : `a finite number ≥ ${min}`, v);
}

/**
 * 2^53 µs: past it a double no longer holds whole µs (HTA reads int64 µs; our clock is a double),
 * so kernels would merge, vanish or end before they start. Every event must end before it.
 */
export const MAX_TRACE_US = 2 ** 53;

/** An event's ts, µs: a finite number in [0, 2^53). */
export function readTs(o: Json, where: string): number {
  const v = o.ts;
  return typeof v === 'number' && v >= 0 && v < MAX_TRACE_US ? v : fail(`${where}.ts`, 'a number in [0, 2^53) µs', v);
}

/** A complete event's ts and dur, µs: dur ≥ 0 (absent: `absentDur`) and ts + dur before 2^53 µs. */
export function readSpan(o: Json, where: string, absentDur?: number): { ts: number; dur: number } {
  const ts = readTs(o, where);
  const v = o.dur;
  if (v === undefined && absentDur !== undefined) return { ts, dur: absentDur };
  if (typeof v === 'number' && v >= 0 && ts + v < MAX_TRACE_US) return { ts, dur: v };
  return fail(`${where}.dur`, `a number ≥ 0 that ends the event before 2^53 µs (ts ${ts})`, v);
}

export function readInt(o: Json, key: string, where: string, min: number, max: number): number {
  const v = o[key];
  return Number.isInteger(v) && (v as number) >= min && (v as number) <= max
    ? (v as number)
    : fail(`${where}.${key}`, `an integer in [${min}, ${max}]`, v);
}
