// Reasons lookup for the explain panel and the hover card: which of the backend's decisions
// (schedule.reasons) concern a trace event or a collective.

import type { Bucket, Reason, Schedule } from '../store';
import type { TraceEvent } from '../trace';

/** The bucket a (possibly merged) collective event belongs to. */
export function bucketOf(schedule: Schedule | undefined, e: TraceEvent): Bucket | undefined {
  if (!schedule) return undefined;
  if (e.bucketId !== undefined) {
    const b = schedule.buckets.find((x) => x.id === e.bucketId);
    if (b) return b;
  }
  const base = baseName(e.name);
  return schedule.buckets.find((x) => x.node === e.name || x.node === base || x.members.includes(base));
}

/** A wait event's name refers to its collective: 'x.wait' → 'x'. */
export function baseName(name: string): string {
  return name.replace(/(\.wait|_wait|\.wait_tensor)$/, '');
}

/** Reasons concerning the event: its bucket's members, or its own (collective) name. */
export function reasonsForEvent(schedule: Schedule | undefined, e: TraceEvent): Reason[] {
  if (!schedule) return [];
  const b = bucketOf(schedule, e);
  const names = new Set<string>(b ? b.members : [e.name, baseName(e.name)]);
  return schedule.reasons.filter((r) => names.has(r.node));
}

/** Collectives the explain panel can pick: every original collective with at least one reason. */
export function explainableCollectives(schedule: Schedule | undefined): string[] {
  if (!schedule) return [];
  const seen = new Set<string>();
  const out: string[] = [];
  for (const r of schedule.reasons) {
    if (!seen.has(r.node)) {
      seen.add(r.node);
      out.push(r.node);
    }
  }
  return out;
}
