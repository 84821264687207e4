// The sentences of a comparison with torch's own log (`pass --torch-log`, the explain panel's
// "torch says"): each side's decision on a collective the two decide differently.

import type { Agreement, Decision } from '../backends';
import { reasonText } from './reason_words';

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
      ...d, torch: decisionText(d.torch), fsdpSim: decisionText(d.fsdpSim),
    })),
  };
}
