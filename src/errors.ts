// Error base and Result type shared by every layer. Errors are named subclasses with a `code`;
// messages give the problem, the value and the valid options or the next step.

export class FsdpSimError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** A config / flag / URL value outside its allowed set or range. */
export class ConfigError extends FsdpSimError {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super('config', message);
  }
}

/** A file (graph dump, trace) that cannot be read; `where` names the node/event and field. */
export class ImportError extends FsdpSimError {
  constructor(
    readonly where: string,
    message: string,
  ) {
    super('import', message);
  }
}

/** Ranks disagree on a collective, or one never arrives. */
export class CollectiveError extends FsdpSimError {}

export type Result<T, E extends Error = FsdpSimError> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: E };

export const ok = <T>(value: T): Result<T, never> => ({ ok: true, value });
export const err = <E extends Error>(error: E): Result<never, E> => ({ ok: false, error });

/** `field must be one of [a, b], got 'x'` */
export function oneOfMessage(field: string, allowed: readonly (string | number)[], got: unknown): string {
  return `${field} must be one of [${allowed.join(', ')}], got ${JSON.stringify(got)}`;
}

/** Deepest nesting a preview shows: a hostile file may nest lists 100k deep, past any recursion. */
const PREVIEW_DEPTH = 4;

/** A short JSON preview of a value for messages, depth-limited (`[[[[…]]]]`): it cannot overflow the stack. */
export function preview(v: unknown, max = 80, depth = 0): string {
  const deeper = (x: unknown) => preview(x, max, depth + 1); // called only while depth < PREVIEW_DEPTH
  let s: string;
  if (Array.isArray(v)) {
    s = depth >= PREVIEW_DEPTH ? '[…]' : `[${v.slice(0, 8).map(deeper).join(',')}${v.length > 8 ? ',…' : ''}]`;
  } else if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    const items = () =>
      Object.keys(o)
        .slice(0, 8)
        .map((k) => `${JSON.stringify(k)}:${deeper(o[k])}`);
    s = depth >= PREVIEW_DEPTH ? '{…}' : `{${items().join(',')}}`;
  } else s = JSON.stringify(v) ?? String(v);
  return s.length > max ? `${s.slice(0, max - 3)}...` : s;
}
