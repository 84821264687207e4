// One sentence above the timelines stating B's result against A in words, from the metrics
// table's numbers: "autobucketing: step −21.9 %, exposed communication −98.0 %, peak memory
// +23.1 %, 41 → 5 all-gathers". Sides on different clocks get no comparison, only a note.

import { useApp, type SideResult } from '../../store';
import { sameClock } from '../clocks';
import { fmtDelta } from '../format';

/** 'aot_eager_autobucketing (live)' → 'autobucketing'; the clock is in each timeline's header. */
function shortName(t: string): string {
  return t.replace(/^aot_eager_(?=\w)/, '').replace(/ \(live\)$/, '');
}

/** The headline's parts (exported for tests through the DOM only; pure for reuse). */
export function headlineOf(a: SideResult, b: SideResult): string {
  const ma = a.metrics;
  const mb = b.metrics;
  const parts = [
    `step ${fmtDelta(ma.stepTimeUs, mb.stepTimeUs)}`,
    `exposed communication ${fmtDelta(ma.exposedCommUs, mb.exposedCommUs)}`,
  ];
  if (a.memory.length && b.memory.length) parts.push(`peak memory ${fmtDelta(ma.peakMemoryBytes, mb.peakMemoryBytes)}`);
  parts.push(`${ma.collectives.all_gather} → ${mb.collectives.all_gather} all-gathers`);
  const live = a.source === 'live' && b.source === 'live' ? ' (both live, one clock)' : '';
  return `${shortName(b.title)} vs ${shortName(a.title)}${live}: ${parts.join(', ')}`;
}

export function Headline() {
  const a = useApp((s) => s.sides.a);
  const b = useApp((s) => s.sides.b);
  if (!a || !b) return null;
  if (!sameClock(a, b)) {
    return (
      <p className="headline muted" data-testid="headline">
        A and B are on different clocks (one simulated, one measured or imported): no comparison is drawn. Run both sides live to compare measured with measured.
      </p>
    );
  }
  return <p className="headline" data-testid="headline" aria-live="polite">{headlineOf(a, b)}</p>;
}
