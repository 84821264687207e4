// One palette for the whole app: compute / all-gather / reduce-scatter / all-to-all / exposed, shared by the
// canvas timeline, the legend and the d3 charts. CSS variables carry the same colours for HTML.

import type { EventKind } from '../trace';

export type Theme = 'light' | 'dark';

export interface Palette {
  readonly compute: string;
  readonly all_gather: string;
  readonly reduce_scatter: string;
  // collectives of imported traces (all-reduce, send/recv, broadcast): one hue, one legend entry
  readonly all_reduce: string;
  readonly send_recv: string;
  readonly broadcast: string;
  readonly all_to_all: string; // MoE token dispatch / combine on the ep group: a hue of its own

  readonly memory: string; // memcpy / memset / sync of imported traces: non-compute GPU time
  readonly sync: string;
  // live mode, measured timeline: host-side time of a rank (GPU → host readback, host → GPU upload, barrier wait)
  readonly readback: string;
  readonly upload: string;
  readonly barrier: string;
  readonly wait: string; // the part of a wait under exposed communication (the metric's exposed comm)
  readonly peerWait: string; // the rest of a wait: no collective of the rank runs yet, a late peer (idle)
  readonly exposed: string; // translucent band behind comm not hidden by compute
  readonly selected: string;
  readonly bucket: string; // outline of a selected bucket's members
  readonly mismatch: string;
  readonly text: string;
  readonly textOnBar: string;
  readonly grid: string;
  readonly laneAlt: string; // alternate lane background
  readonly background: string;
}

const LIGHT: Palette = {
  compute: '#4e79a7',
  all_gather: '#59a14f',
  reduce_scatter: '#f28e2b',
  all_reduce: '#76b7b2',
  send_recv: '#76b7b2',
  broadcast: '#76b7b2',
  all_to_all: '#9c755f',
  memory: '#9c9c9c',
  sync: '#9c9c9c',
  readback: '#edc948',
  upload: '#b6992d',
  barrier: '#bab0ac',
  wait: '#e15759',
  peerWait: '#8c6bb1',
  exposed: 'rgba(225, 87, 89, 0.22)',
  selected: '#111111',
  bucket: '#b07aa1',
  mismatch: '#d00000',
  text: '#1d1f23',
  textOnBar: '#ffffff',
  grid: 'rgba(0,0,0,0.08)',
  laneAlt: 'rgba(0,0,0,0.025)',
  background: '#ffffff',
};

const DARK: Palette = {
  compute: '#6f9fd8',
  all_gather: '#7cc46f',
  reduce_scatter: '#f5a35a',
  all_reduce: '#86d0ca',
  send_recv: '#86d0ca',
  broadcast: '#86d0ca',
  all_to_all: '#c9a283',
  memory: '#8a8f98',
  sync: '#8a8f98',
  readback: '#f1d35c',
  upload: '#d4b43f',
  barrier: '#a39b97',
  wait: '#ff6b6e',
  peerWait: '#b39ddb',
  exposed: 'rgba(255, 107, 110, 0.25)',
  selected: '#ffffff',
  bucket: '#d7a6ff',
  mismatch: '#ff4d4d',
  text: '#e6e8eb',
  textOnBar: '#0d0f12',
  grid: 'rgba(255,255,255,0.09)',
  laneAlt: 'rgba(255,255,255,0.03)',
  background: '#17191d',
};

export function paletteFor(theme: Theme): Palette {
  return theme === 'dark' ? DARK : LIGHT;
}

/** One legend entry: the event kinds it stands for, drawn in one colour. */
export interface LegendEntry {
  readonly key: string;
  readonly kinds: readonly EventKind[];
  readonly label: string;
  readonly color: keyof Palette;
  /** Glossary id of its definition. */
  readonly term: string;
  /** Shown even when no event of its kinds is drawn (the kinds every simulated step has). */
  readonly always?: boolean;
}

/** Entries in legend order; every kind the timeline draws has one (a unit test holds it). */
export const LEGEND: readonly LegendEntry[] = [
  { key: 'compute', kinds: ['compute'], label: 'compute', color: 'compute', term: 'compute', always: true },
  {
    key: 'all_gather',
    kinds: ['all_gather'],
    label: 'all-gather',
    color: 'all_gather',
    term: 'all_gather',
    always: true,
  },
  {
    key: 'reduce_scatter',
    kinds: ['reduce_scatter'],
    label: 'reduce-scatter',
    color: 'reduce_scatter',
    term: 'reduce_scatter',
    always: true,
  },
  { key: 'all_to_all', kinds: ['all_to_all'], label: 'all-to-all', color: 'all_to_all', term: 'all_to_all' },
  {
    key: 'other_collectives',
    kinds: ['all_reduce', 'send_recv', 'broadcast'],
    label: 'other collectives',
    color: 'all_reduce',
    term: 'other_collectives',
  },
  { key: 'memory', kinds: ['memory', 'sync'], label: 'memcpy / sync', color: 'memory', term: 'memcpy' },
  { key: 'readback', kinds: ['readback'], label: 'readback (GPU → host)', color: 'readback', term: 'readback' },
  { key: 'upload', kinds: ['upload'], label: 'upload (host → GPU)', color: 'upload', term: 'upload' },
  { key: 'barrier', kinds: ['barrier'], label: 'barrier wait', color: 'barrier', term: 'barrier' },
  { key: 'wait', kinds: ['wait'], label: 'wait (exposed comm)', color: 'wait', term: 'wait', always: true },
];

/** The part of a wait with no collective running yet: drawn in its own colour, counted as idle. */
export const PEER_WAIT_ENTRY = {
  key: 'peer_wait',
  label: 'wait for a late peer',
  color: 'peerWait',
  term: 'peer_wait',
} as const;

/** The band behind communication no compute hides: not an event kind, drawn under them. */
export const EXPOSED_ENTRY = {
  key: 'exposed',
  label: 'comm not hidden by compute (band + red edge)',
  color: 'exposed',
  term: 'exposed',
} as const;

/** Entries for the kinds present in the events (plus the always-shown ones), in legend order. */
export function legendFor(kinds: ReadonlySet<EventKind>): LegendEntry[] {
  return LEGEND.filter((l) => l.always || l.kinds.some((k) => kinds.has(k)));
}
