// Which clock a timeline's times come from, in words, and whether two sides can be compared.
// A cost-model side and a measured side differ by orders of magnitude for reasons that have
// nothing to do with the backends (a browser is not an H100), so their delta is never shown.

import { LIVE_MEASURED_CLOCK, type SideResult } from '../store';

export type ClockKind = 'model' | 'measured' | 'imported';

export function clockKind(r: SideResult): ClockKind {
  if (r.source === 'import') return 'imported';
  // exactly the wall-clock timeline: a clock that merely mentions "measured" is not one
  if (r.source === 'live' && r.clock === LIVE_MEASURED_CLOCK) return 'measured';
  return 'model'; // simulated, or a live run replayed on the cost model ('preset' timing)
}

const WORDS: Readonly<Record<ClockKind, string>> = {
  model: 'simulated time (cost model)',
  measured: 'real time, measured in this browser',
  imported: 'time from the imported trace',
};

/** Header text: 'clock: simulated time (cost model) · cost model: h100, nvlink-ib'. */
export function clockWords(r: SideResult): string {
  const k = clockKind(r);
  if (r.source === 'live' && k === 'model') {
    return 'clock: cost-model time replayed for the live schedule (not measured)';
  }
  return `clock: ${WORDS[k]}`;
}

/** Whether A and B are on one clock (their deltas mean something). */
export function sameClock(a: SideResult | null | undefined, b: SideResult | null | undefined): boolean {
  return !!a && !!b && clockKind(a) === clockKind(b);
}
