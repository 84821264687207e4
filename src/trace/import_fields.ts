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

export function readInt(o: Json, key: string, where: string, min: number, max: number): number {
  const v = o[key];
  return Number.isInteger(v) && (v as number) >= min && (v as number) <= max
    ? (v as number)
    : fail(`${where}.${key}`, `an integer in [${min}, ${max}]`, v);
}
