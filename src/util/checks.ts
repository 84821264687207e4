// Validation of numbers from untrusted input: a ConfigError naming the field, the allowed range
// and the value found, in the one wording every layer uses.

import { ConfigError } from '../errors';

/** `v` when it is a safe integer in [lo, hi]; else `field must be an integer in [lo, hi], got v`. */
export function intIn(field: string, v: unknown, lo: number, hi: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < lo || v > hi) {
    throw new ConfigError(field, `${field} must be an integer in [${lo}, ${hi}], got ${JSON.stringify(v)}`);
  }
  return v;
}
