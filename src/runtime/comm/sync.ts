// Waiting primitives over the control SAB: one futex word (W_WAKE) bumped and notified on every state
// change, so a waiter snapshots it, checks its condition, and sleeps at most until its deadline.
// Every wait has a timeout and also wakes on abort: no collective can hang.

import { CollectiveError } from '../../errors';
import {
  ABORT_REASON_BYTES,
  W_ABORT,
  W_ABORT_CLAIM,
  W_ABORT_LEN,
  W_PROBE,
  W_WAKE,
  type ControlLayout,
} from './layout';

const now = (): number => performance.now(); // ms, monotonic

/** Throws a clear error when this thread may not block (a browser main thread). */
export function assertCanBlock(words: Int32Array): void {
  try {
    Atomics.wait(words, W_PROBE, 1, 0); // value is 0, so this returns 'not-equal' at once where allowed
  } catch (e) {
    throw new CollectiveError(
      'atomics_unavailable',
      `RankComm needs Atomics.wait, which this thread forbids (${(e as Error).message}): ` +
        'run ranks in dedicated Web Workers or Node worker_threads, never on a browser main thread',
    );
  }
}

export class ControlSync {
  private epoch: number; // barrier epochs this rank has entered (mirrors ARRIVE[rank])

  constructor(
    readonly words: Int32Array,
    readonly bytes: Uint8Array,
    readonly layout: ControlLayout,
    readonly rank: number,
    readonly timeoutMs: number,
  ) {
    this.epoch = Atomics.load(words, layout.arriveBase + rank);
  }

  /** Tell every waiter something changed. */
  bump(): void {
    Atomics.add(this.words, W_WAKE, 1);
    Atomics.notify(this.words, W_WAKE);
  }

  /** Rank that aborted, or -1. */
  abortedBy(): number {
    return Atomics.load(this.words, W_ABORT) - 1;
  }

  abortReason(): string {
    const len = Atomics.load(this.words, W_ABORT_LEN);
    const start = this.layout.abortReasonByte;
    return new TextDecoder().decode(this.bytes.slice(start, start + len));
  }

  /** Throws the abort error when any rank has aborted. `where` says what this rank was doing. */
  checkAbort(where: string): void {
    const by = this.abortedBy();
    if (by < 0) return;
    throw new CollectiveError(
      'collective_aborted',
      `collective aborted by rank ${by} (rank ${this.rank} was in ${where}): ${this.abortReason()}`,
    );
  }

  /** First caller's reason wins; later aborts only wake waiters again. */
  abort(reason: string): void {
    if (Atomics.compareExchange(this.words, W_ABORT_CLAIM, 0, this.rank + 1) === 0) {
      const enc = new TextEncoder().encode(reason);
      let text = enc.subarray(0, ABORT_REASON_BYTES);
      if (enc.length > ABORT_REASON_BYTES) {
        // Keep whole UTF-8 characters: drop trailing continuation bytes.
        let end = ABORT_REASON_BYTES;
        while (end > 0 && (enc[end] & 0xc0) === 0x80) end--;
        text = enc.subarray(0, end);
      }
      this.bytes.set(text, this.layout.abortReasonByte);
      Atomics.store(this.words, W_ABORT_LEN, text.length);
      Atomics.store(this.words, W_ABORT, this.rank + 1);
    }
    this.bump();
  }

  /**
   * Sleeps until `ready()` holds. On timeout, builds the error from `missing()` (ranks not there
   * yet), aborts the communicator with it so late ranks fail fast, and throws it.
   */
  waitUntil(ready: () => boolean, missing: () => readonly number[], where: string, seq: number): void {
    const deadline = now() + this.timeoutMs;
    for (;;) {
      const snap = Atomics.load(this.words, W_WAKE);
      if (ready()) return; // a collective that completed still completes; the abort shows at the next wait
      this.checkAbort(where);
      const leftMs = deadline - now();
      if (leftMs <= 0) {
        const ranks = missing();
        const who = ranks.length === 1 ? `rank ${ranks[0]}` : `ranks ${ranks.join(', ')}`;
        const msg =
          `collective timeout at seq ${seq}: rank ${this.rank} waited ${this.timeoutMs} ms in ${where} ` +
          `for ${who}, which never arrived`;
        this.abort(msg);
        throw new CollectiveError('collective_timeout', msg);
      }
      Atomics.wait(this.words, W_WAKE, snap, leftMs);
    }
  }

  /** All ranks reach this point (or the wait times out / aborts). */
  barrier(where: string, seq: number): void {
    const { words, layout } = this;
    const n = layout.worldSize;
    const epoch = ++this.epoch;
    Atomics.store(words, layout.arriveBase + this.rank, epoch);
    this.bump();
    const behind = (): number[] => {
      const out: number[] = [];
      for (let r = 0; r < n; r++) if (Atomics.load(words, layout.arriveBase + r) < epoch) out.push(r);
      return out;
    };
    this.waitUntil(() => behind().length === 0, behind, where, seq);
  }

  /** Ring steps `rank` has posted so far (cumulative over the communicator's life). */
  ringPosted(rank: number): number {
    return Atomics.load(this.words, this.layout.ringBase + rank);
  }

  postRingStep(count: number): void {
    Atomics.store(this.words, this.layout.ringBase + this.rank, count);
    this.bump();
  }

  /** Wait until `from` has posted at least `count` ring steps. */
  waitRing(from: number, count: number, where: string, seq: number): void {
    this.waitUntil(() => this.ringPosted(from) >= count, () => [from], where, seq);
  }
}
