// What each timeline drew in its last frame, as one typed object per side: the e2e tests (and
// anyone at the devtools console) read it from window.__FSDP_SIM__.timelines, set in main.tsx.
// A frame writes a plain object here; nothing goes into the DOM for the tests' sake.

import type { Side } from '../../store';

export interface TimelineProbe {
  /** Lanes (rank × stream) the canvas shows. */
  readonly lanes: number;
  /** Each lane's stream ('compute', 'comm:dp', …). */
  readonly laneStreams: readonly string[];
  /** The ranks each lane stands for: one rank, or every alike rank when they are folded. */
  readonly laneRanks: readonly (readonly number[])[];
  /** Every rank's events are alike (rank_groups.ts); `folded`: they are drawn once. */
  readonly alike: boolean;
  readonly folded: boolean;
  /**
   * Red drawn per lane over the whole step, µs: on a comm lane the exposed-communication band, on a
   * compute lane the part of its waits under it. The rest of its waits: `peerWaitUs`.
   */
  readonly redUs: readonly number[];
  readonly peerWaitUs: readonly number[];
  /** The story's subject outlined in the presentation view (canvas CSS px), or null. */
  readonly subject: { readonly x: number; readonly y: number; readonly w: number; readonly h: number } | null;
  /** Events of the side's result. */
  readonly events: number;
  /** Rectangles and pixel columns drawn in the last frame (drawTimeline's count). */
  readonly drawn: number;
  /** Source index of the highlighted event (the selection, or its diff-table peer); -1: none. */
  readonly selected: number;
  /** Events of collectives that torch's log decided otherwise. */
  readonly flagged: number;
  /** Flow arrows of the selected collective. */
  readonly flowArrows: number;
  /** The keyboard cursor's lane; -1: none. */
  readonly keyLane: number;
  /** The y of each lane's middle, in CSS px from the canvas top. */
  readonly laneCentresPx: readonly number[];
  /** The time window drawn, [start, end] in µs. */
  readonly window: readonly [number, number];
  /** How long the last frame took to draw (ms). */
  readonly drawMs: number;
}

/** The last frame of each side's timeline; a side without a drawn timeline has no entry. */
export const timelineProbes: Partial<Record<Side, TimelineProbe>> = {};

export function publishProbe(side: Side, probe: TimelineProbe): void {
  timelineProbes[side] = probe;
}

export function clearProbe(side: Side): void {
  delete timelineProbes[side];
}
