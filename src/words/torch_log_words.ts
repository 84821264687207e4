// The sentences of a comparison with torch's own log (`pass --torch-log`, the explain panel's
// "torch says"): each side's decision on a collective the two decide differently.

import type { Agreement, Decision, LogMismatch } from '../backends';
import { reasonText } from './reason_words';
import { formatDuration, gibText } from '../util';

export function decisionText(d: Decision): string {
  switch (d.kind) {
    case 'prefetched':
      return `prefetched behind ${d.behind}`;
    case 'not_prefetched': {
      const co = d.cannotOverlap;
      return `not prefetched${co ? ` (cannot overlap with ${co.node}: ${co.why})` : ''}`;
    }
    case 'bucketed':
      return `bucketed with ${d.with.join(', ')}`;
    case 'not_bucketed': {
      const cb = d.cannotBucket;
      return `not bucketed${cb ? ` (with ${cb.seed}: ${cb.why})` : ''}`;
    }
    case 'reason':
      return d.reason ? reasonText(d.reason) : 'no decision recorded';
  }
}

/** An agreement as `pass --json` prints it: each disagreement's sides as sentences. */
export function wordedAgreement(a: Agreement) {
  return {
    ...a,
    disagreements: a.disagreements.map((d) => ({
      ...d,
      torch: decisionText(d.torch),
      fsdpSim: decisionText(d.fsdpSim),
    })),
  };
}

const some = (names: readonly string[], count: number) => `${names.join(', ')}${count > names.length ? ', …' : ''}`;

/** Why torch's log is not of this pass, said before any agreement figure (`pass --torch-log`). */
export function logMismatchText(m: LogMismatch): string {
  switch (m.kind) {
    case 'other_graph': {
      const hint = m.preBucketedHere
        ? ''
        : ", or of a pass that pre-bucketed first (torch 2.13's knobs: --torch-profile 2.13)";
      return (
        `torch's log (${m.phase}) names ${m.count} collective(s) this FX graph does not have ` +
        `(${some(m.names, m.count)}): a log of another graph${hint}`
      );
    }
    case 'pre_bucketed_here':
      return (
        `this run's FSDP pre-bucketing (torch 2.13's knobs) merged ${m.count} collective(s) torch's log ` +
        `(${m.phase}) schedules one by one (${some(m.names, m.count)}): the log was made without it ` +
        "(torch 2.11's knobs: --torch-profile 2.11); the agreement compares two different passes"
      );
    case 'other_runtimes': {
      const ms = (x: number) => formatDuration(x * 1000, { unit: 'ms', digits: 2 });
      const t = m.originalPeakBytes.torch;
      const peak = t === undefined ? '' : `, original peak ${gibText(t)} vs ${gibText(m.originalPeakBytes.fsdpSim)}`;
      const pot = m.potentialExposedMs;
      const sums = Number.isNaN(pot.torch) ? '' : `collectives' estimates ${ms(pot.torch)} vs ${ms(pot.fsdpSim)}`;
      return (
        `torch's log (${m.phase}) was made with other runtimes or another world size ` +
        `(torch vs this run: ${[sums, peak.slice(2)].filter(Boolean).join(', ')}); the agreement compares two ` +
        'different passes'
      );
    }
  }
}
