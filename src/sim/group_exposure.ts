// Exposed communication per process group on one rank: the time a group's comm stream is busy
// with no compute running under it (HTA's exposed communication, restricted to one stream). On a
// mesh, groups may run at once, so the groups' figures can add up to more than the rank's
// exposed total (which counts a moment once however many groups are busy).

import { intersect, totalLength, union, type Interval, commGroupOf, type TraceEvent } from '../trace';

/** Group name → exposed µs on `rank`, groups in first-event order. */
export function exposedCommByGroup(rank: number, events: readonly TraceEvent[]): Record<string, number> {
  const comp: Interval[] = [];
  const byGroup = new Map<string, Interval[]>();
  for (const e of events) {
    if (e.rank !== rank || e.dur <= 0) continue;
    const iv: Interval = [e.start, e.start + e.dur];
    const g = commGroupOf(e.stream);
    if (g === undefined) {
      if (e.kind === 'compute') comp.push(iv); // on the compute stream or a side stream: HTA counts every kernel
    } else {
      const list = byGroup.get(g);
      if (list) list.push(iv);
      else byGroup.set(g, [iv]);
    }
  }
  const uComp = union(comp);
  const out: Record<string, number> = {};
  for (const [g, ivs] of byGroup) {
    const u = union(ivs);
    out[g] = totalLength(u) - totalLength(intersect(u, uComp));
  }
  return out;
}
