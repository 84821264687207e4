// Communication kinds a trace event can carry, in display order. One list: the importer, the
// metrics, the export and the timeline all read it, so a new kind is added in one place.

export const COMM_KINDS = [
  'all_gather',
  'reduce_scatter',
  'all_reduce',
  'send_recv',
  'broadcast',
  'all_to_all',
] as const;

export type CommKind = (typeof COMM_KINDS)[number];

const COMM_SET: ReadonlySet<string> = new Set(COMM_KINDS);

export const isCommKind = (k: string): k is CommKind => COMM_SET.has(k);

/** Labels for tables and legends ('all-reduce', 'send/recv'). */
export const COMM_LABELS: Readonly<Record<CommKind, string>> = {
  all_gather: 'all-gather',
  reduce_scatter: 'reduce-scatter',
  all_reduce: 'all-reduce',
  send_recv: 'send/recv',
  broadcast: 'broadcast',
  all_to_all: 'all-to-all',
};
