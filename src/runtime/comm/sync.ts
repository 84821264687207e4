// Waiting primitives over the control SAB: two futex words, bumped and notified only when something
// a waiter can wait for completes: W_WAKE on the last arrival of a barrier, a ring step or an abort;
// W_WAKE_DONE on the last rank done reading a collective or an abort. So n arrivals cost one
// wake-up, not n, and a rank asleep in the next barrier is not woken by the previous one's done. A waiter
// snapshots it, checks its condition (spinning briefly first), and sleeps at most until its
// deadline. Every wait has a timeout and also wakes on abort: no collective can hang.

import { CollectiveError } from '../../errors';
import {
  ABORT_REASON_BYTES,
  W_ABORT,
  W_ABORT_CLAIM,
  W_ABORT_LEN,
  W_ARRIVED,
  W_DONE,
  W_PROBE,
  W_WAKE,
  W_WAKE_DONE,
  type ControlLayout,
} from './layout';

const now = (): number => performance.now(); // ms, monotonic

/**
 * Spin before sleeping, adaptively: a futex wake-up costs tens of µs to ms when the box is busy, but
 * a spin steals the core from the rank being waited for when ranks outnumber cores (8 ranks on 2
 * cores). So each rank spins up to `spinUs` (checking the condition); when it still had to sleep, it
 * doubles the budget if the whole wait was under SPIN_MAX_US and halves it otherwise: ranks that
 * time-share (long waits) settle near SPIN_MIN_US. Where the runtime reports its cores
 * (navigator.hardwareConcurrency: browsers, Node ≥ 21) and ranks outnumber them, it never grows.
 */
export const SPIN_MIN_US = 1;
export const SPIN_MAX_US = 100;
/**
 * A rank with a core of its own spins this long, fixed: spinning costs only its own core, while a
 * sleep costs a wake-up (100–300 µs on a shared VM), and an adaptive budget that a few slow wake-ups
 * shrank kept two ranks waking each other collective after collective (a 1 MB all-gather on 2 ranks
 * at 0.17 or 0.33 ms from run to run; with a fixed spin, 0.12–0.2 ms). Not longer: V8's compiler and
 * GC threads want a core now and then, and a rank spinning 1 ms for one that cannot run made a
 * few collectives take 2–3 ms.
 */
export const SPIN_DEDICATED_US = 400;

/**
 * The fixed spin for `threads` rank threads sharing `cores` (the whole run's ranks, not one group's:
 * a 2 × 2 mesh is 4 threads): SPIN_DEDICATED_US when each has a core, SPIN_MIN_US when they
 * time-share; undefined (adaptive) when the cores are not known.
 */
export function fixedSpinUs(threads: number, cores: number | undefined): number | undefined {
  if (cores === undefined || !(cores > 0)) return undefined;
  return threads <= cores ? SPIN_DEDICATED_US : SPIN_MIN_US;
}
const SPIN_CHECKS_PER_CLOCK = 64; // condition checks between two reads of the clock

/** Spin ceiling for `worldSize` ranks: SPIN_MIN_US when they outnumber the cores the runtime reports. */
export function spinCeilingUs(worldSize: number): number {
  const cores = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency;
  return cores !== undefined && cores > 0 && worldSize > cores ? SPIN_MIN_US : SPIN_MAX_US;
}

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
  private spinUs: number; // current spin budget (adaptive, see SPIN_MAX_US, unless fixed)
  private readonly fixedSpin: boolean;
  private readonly spinMaxUs: number;
  private readonly globalRanks: readonly number[] | undefined;
  /**
   * Told of every wait that did not find its condition already true (spin included): the step breakdown's barrier
   * phase.
   */
  onWait: ((startMs: number, endMs: number) => void) | undefined;

  constructor(
    readonly words: Int32Array,
    readonly bytes: Uint8Array,
    readonly layout: ControlLayout,
    readonly rank: number,
    readonly timeoutMs: number,
    opts: {
      /** Global rank of each group position (a mesh sub-group); messages name ranks by it. Default: the identity. */
      readonly globalRanks?: readonly number[];
      /** A fixed spin budget (fixedSpinUs); absent: adaptive. */
      readonly spinUs?: number;
    } = {},
  ) {
    this.epoch = Atomics.load(words, layout.arriveBase + rank);
    this.globalRanks = opts.globalRanks;
    this.fixedSpin = opts.spinUs !== undefined;
    this.spinUs = opts.spinUs ?? SPIN_MIN_US;
    this.spinMaxUs = spinCeilingUs(layout.worldSize);
  }

  /** How messages name group position `r`: its global rank. */
  rankName(r: number): number {
    return this.globalRanks?.[r] ?? r;
  }

  /** Tell every waiter something changed. */
  bump(word = W_WAKE): void {
    Atomics.add(this.words, word, 1);
    Atomics.notify(this.words, word);
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
      `collective aborted by rank ${this.rankName(by)} (rank ${this.rankName(this.rank)} was in ${where}): ` +
        this.abortReason(),
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
    this.bump(W_WAKE);
    this.bump(W_WAKE_DONE);
  }

  /**
   * Sleeps until `ready()` holds. On timeout, builds the error from `missing()` (ranks not there
   * yet), aborts the communicator with it so late ranks fail fast, and throws it.
   */
  waitUntil(ready: () => boolean, missing: () => readonly number[], where: string, seq: number, word = W_WAKE): void {
    if (ready()) return;
    const startMs = now();
    if (this.spin(ready)) return this.onWait?.(startMs, now());
    const deadline = startMs + this.timeoutMs;
    for (;;) {
      const snap = Atomics.load(this.words, word);
      if (ready()) {
        // a collective that completed still completes; the abort shows at the next wait
        const endMs = now();
        this.adaptSpin(endMs - startMs);
        this.onWait?.(startMs, endMs);
        return;
      }
      this.checkAbort(where);
      const leftMs = deadline - now();
      if (leftMs <= 0) {
        const ranks = missing().map((r) => this.rankName(r));
        const who = ranks.length === 1 ? `rank ${ranks[0]}` : `ranks ${ranks.join(', ')}`;
        const msg =
          `collective timeout at seq ${seq}: rank ${this.rankName(this.rank)} waited ${this.timeoutMs} ms ` +
          `in ${where} ` +
          `for ${who}, which never arrived`;
        this.abort(msg);
        throw new CollectiveError('collective_timeout', msg);
      }
      Atomics.wait(this.words, word, snap, leftMs);
    }
  }

  /** Spins up to the current budget; true when `ready()` came true meanwhile. */
  private spin(ready: () => boolean): boolean {
    const endMs = now() + this.spinUs / 1000;
    do {
      for (let i = 0; i < SPIN_CHECKS_PER_CLOCK; i++) if (ready()) return true;
    } while (now() < endMs);
    return false;
  }

  /** After a spin that had to sleep: a wait a longer spin would have covered grows the budget, a long one halves it. */
  private adaptSpin(waitedMs: number): void {
    if (this.fixedSpin) return;
    this.spinUs =
      waitedMs * 1000 <= this.spinMaxUs
        ? Math.min(this.spinMaxUs, this.spinUs * 2)
        : Math.max(SPIN_MIN_US, this.spinUs / 2);
  }

  /** Ranks whose per-rank word at `base` is still below `epoch`. */
  private behind(base: number, epoch: number): number[] {
    const out: number[] = [];
    for (let r = 0; r < this.layout.worldSize; r++) if (Atomics.load(this.words, base + r) < epoch) out.push(r);
    return out;
  }

  /**
   * Arrive at the next barrier epoch without waiting. Arrivals are counted in one word, so epoch e is
   * complete when it reaches e·n; only the last arriver wakes the sleepers.
   */
  arrive(): void {
    const epoch = ++this.epoch;
    Atomics.store(this.words, this.layout.arriveBase + this.rank, epoch); // for the timeout message
    if (Atomics.add(this.words, W_ARRIVED, 1) + 1 === epoch * this.layout.worldSize) this.bump();
  }

  /** Whether rank q has arrived at this rank's current epoch (its data for it is written). */
  hasArrived(q: number): boolean {
    return Atomics.load(this.words, this.layout.arriveBase + q) >= this.epoch;
  }

  /** Wait until every rank has arrived at this rank's current epoch. */
  waitArrived(where: string, seq: number): void {
    const { words } = this;
    const want = this.epoch * this.layout.worldSize;
    this.waitUntil(
      () => Atomics.load(words, W_ARRIVED) >= want,
      () => this.behind(this.layout.arriveBase, this.epoch),
      where,
      seq,
    );
  }

  /** All ranks reach this point (or the wait times out / aborts). */
  barrier(where: string, seq: number): void {
    this.arrive();
    this.waitArrived(where, seq);
  }

  /** This rank has finished reading the current epoch's data (call once per epoch, after the barrier). */
  finish(): void {
    const epoch = this.epoch;
    Atomics.store(this.words, this.layout.doneBase + this.rank, epoch);
    if (Atomics.add(this.words, W_DONE, 1) + 1 === epoch * this.layout.worldSize) this.bump(W_WAKE_DONE);
  }

  /** Wait until every rank has finished reading the current epoch's data (before overwriting it). */
  waitFinished(where: string, seq: number): void {
    const { words } = this;
    const epoch = this.epoch;
    const want = epoch * this.layout.worldSize;
    this.waitUntil(
      () => Atomics.load(words, W_DONE) >= want,
      () => this.behind(this.layout.doneBase, epoch),
      where,
      seq,
      W_WAKE_DONE,
    );
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
    this.waitUntil(
      () => this.ringPosted(from) >= count,
      () => [from],
      where,
      seq,
    );
  }
}
