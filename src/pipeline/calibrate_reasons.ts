// Why a calibration left a collective, or a whole group, out of its fit: a code and the facts
// behind it, as the trace gave them. src/words/calibrate_words.ts says each in one sentence
// (docs/ARCHITECTURE.md §4); an error at bad input (ImportError) keeps its message where it is thrown.

/** A collective's size and time, for a reason that names them. */
interface TimedSize {
  readonly bytes: number;
  readonly durUs: number;
}

export type LeftOutReason =
  /** all-to-all, send / recv, broadcast: the ring model covers all-gather, reduce-scatter, all-reduce. */
  | { readonly code: 'no_ring' }
  /** A count field present but no whole number in [0, 2^53): its name and its value, previewed. */
  | { readonly code: 'bad_count'; readonly field: string; readonly value: string }
  /** A group the trace names but neither sizes nor the config has. */
  | { readonly code: 'unknown_group'; readonly group: string }
  /** No group named and no size; `world`: whether the trace states distributedInfo.world_size. */
  | { readonly code: 'no_group'; readonly world: boolean }
  | { readonly code: 'group_size_zero' }
  /** `n` above `most`: the trace's world_size (`world`) or the ranks a trace can name. */
  | { readonly code: 'group_size_over'; readonly n: number; readonly most: number; readonly world: boolean }
  | { readonly code: 'one_rank' }
  /** No element counts anywhere (kernel args, record_param_comms, nccl:* op). */
  | { readonly code: 'no_size' }
  | { readonly code: 'no_dtype' }
  /** A dtype name of no known size (the known ones: calibrate_comms.ts TRACE_DTYPE_BYTES). */
  | { readonly code: 'bad_dtype'; readonly dtype: string }
  | { readonly code: 'bad_bytes'; readonly bytes: number }
  | { readonly code: 'no_duration' }
  /** A group whose collectives all move one size (`bytes`): α and β cannot be told apart. */
  | { readonly code: 'one_size'; readonly samples: number; readonly bytes: number }
  | { readonly code: 'singular' }
  /** Durations that do not grow with size: the smallest and the largest collective. */
  | { readonly code: 'no_growth'; readonly lo: TimedSize; readonly hi: TimedSize };

/** A key equal for equal reasons (numbers by their text: NaN and Infinity stay apart). */
export const reasonKey = (r: LeftOutReason): string =>
  JSON.stringify(r, (_k, v: unknown) => (typeof v === 'number' ? String(v) : v));

/** A kind of collective and how many of it, e.g. all_reduce × 8. */
export interface KindCount {
  readonly kind: string;
  readonly count: number;
}
