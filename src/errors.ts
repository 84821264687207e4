// Error base and Result type shared by every layer. Errors are named subclasses with a `code`;
// messages give the problem, the value and the valid options or the next step.

export class FsdpSimError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** A config / flag / URL value outside its allowed set or range. */
export class ConfigError extends FsdpSimError {
  constructor(readonly field: string, message: string) {
    super('config', message);
  }
}

/** A file (graph dump, trace) that cannot be read; `where` names the node/event and field. */
export class ImportError extends FsdpSimError {
  constructor(readonly where: string, message: string) {
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
