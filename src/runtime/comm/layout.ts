// Control SharedArrayBuffer layout for the rank collectives: one Int32 word table (futex word,
// abort flag, arrival / done counters, per-rank barrier epochs, done epochs and ring step counters,
// per-rank descriptors, per-rank all-to-all split tables) followed by
// byte regions for the abort reason and each rank's descriptor text. Offsets are computed here once
// so the coordinator (which allocates) and every rank (which reads) agree.

/** Bytes kept per rank for its descriptor text (`[tensor, names]`, truncated with '…'). */
export const DESC_TEXT_BYTES = 512;
/** Bytes kept for the abort reason. */
export const ABORT_REASON_BYTES = 1024;
/** Int32 words per descriptor: seq, kind code, elems, tensor-list hash, text bytes. */
export const DESC_WORDS = 5;
/**
 * Descriptor slots per rank, used by seq parity: a fast rank may publish seq s+1 while a slow one
 * still reads seq s, but it cannot publish s+2 before every rank has entered s+1 (done reading s).
 */
export const DESC_SLOTS = 2;

/** Fixed Int32 word indices. */
export const W_WAKE = 0; // futex word: bumped + notified when a barrier completes, a ring step or an abort
export const W_ABORT = 1; // 0, or aborting rank + 1 (set after the reason is written)
export const W_ABORT_CLAIM = 2; // first aborter claims it (compareExchange) and writes the reason
export const W_ABORT_LEN = 3; // abort reason length, bytes
export const W_PROBE = 4; // always 0: Atomics.wait availability probe
export const W_MAGIC = 5; // CONTROL_MAGIC: guards against a foreign buffer
export const W_WORLD = 6; // worldSize the buffer was laid out for
export const W_ARRIVED = 7; // barrier arrivals, all ranks (epoch e is complete at e·n); the last arriver bumps W_WAKE
// collectives finished (data read), all ranks (epoch e read out at e·n); the last one bumps W_WAKE_DONE
export const W_DONE = 8;
// futex word of done waits (apart from W_WAKE so a done never wakes barrier sleepers); aborts bump it too
export const W_WAKE_DONE = 9;
const W_FIXED = 12;

export const CONTROL_MAGIC = 0x46534443; // 'FSDC'

export interface ControlLayout {
  readonly worldSize: number;
  readonly arriveBase: number; // Int32 index of ARRIVE[0]: barrier epoch each rank has reached
  readonly doneBase: number; // Int32 index of DONE[0]: epoch whose data each rank has finished reading
  readonly ringBase: number; // Int32 index of RING[0]: ring steps each rank has posted (cumulative)
  readonly descBase: number; // Int32 index of rank 0's descriptor words (slot of seq parity 0)
  readonly splitBase: number; // Int32 index of rank 0's all-to-all split table (slot of seq parity 0)
  readonly abortReasonByte: number; // byte offset of the abort reason
  readonly descTextByte: number; // byte offset of rank 0's descriptor text
  readonly bytes: number; // total control buffer size
}

/** Int32 words of one all-to-all split slot: the n send sizes, then the n receive sizes (elements). */
export const splitWords = (worldSize: number): number => 2 * worldSize;

export function controlLayout(worldSize: number): ControlLayout {
  const arriveBase = W_FIXED;
  const doneBase = arriveBase + worldSize;
  const ringBase = doneBase + worldSize;
  const descBase = ringBase + worldSize;
  const splitBase = descBase + worldSize * DESC_SLOTS * DESC_WORDS;
  const words = splitBase + worldSize * DESC_SLOTS * splitWords(worldSize);
  const abortReasonByte = words * 4;
  const descTextByte = abortReasonByte + ABORT_REASON_BYTES;
  const bytes = descTextByte + worldSize * DESC_SLOTS * DESC_TEXT_BYTES;
  return {
    worldSize,
    arriveBase,
    doneBase,
    ringBase,
    descBase,
    splitBase,
    abortReasonByte,
    descTextByte,
    bytes: Math.ceil(bytes / 8) * 8,
  };
}

/**
 * The latency path's area (bytes): a direct reduce-scatter whose SAB footprint fits it (n·n·c, every
 * rank's full input) runs in one of two such areas by seq parity, after the rank regions. It then
 * never shares an area with the collective before it, so it does not wait for that one's readers
 * before writing: one wake-up per small reduce-scatter, not two.
 */
export const LATENCY_AREA_BYTES = 4 * 2 ** 20;

/** Elements of one latency area: never more than the largest footprint a communicator can see. */
export function latencyAreaElems(worldSize: number, maxElemsPerRank: number): number {
  return Math.min(LATENCY_AREA_BYTES / 4, worldSize * worldSize * maxElemsPerRank);
}

/** Data buffer elements (f32): each rank owns a region of worldSize × maxElemsPerRank, then two latency areas. */
export function dataElems(worldSize: number, maxElemsPerRank: number): number {
  // direct reduce-scatter writes a full n·C input per rank
  return worldSize * worldSize * maxElemsPerRank + 2 * latencyAreaElems(worldSize, maxElemsPerRank);
}
