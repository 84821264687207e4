// Claims about an MoE step under expert parallel (docs/moe.md): which process group's
// communication torch's pass hides and which it leaves exposed, and that it buckets no
// all-to-all. Each is a check on the run's data with its sentence, like claims.ts.

import { exposedCommByGroup, type SideResult } from '../store';
import { formatShare } from '../util';
import type { ClaimCheck } from './claims';
import { fmtUs } from './ui_format';

/** Exposed µs per comm group on the side's first drawn rank (dp / efsdp / ep …). */
function exposedByGroup(s: SideResult): Record<string, number> {
  return s.events.length ? exposedCommByGroup(s.events[0].rank, s.events) : {};
}

const groupList = (g: Record<string, number>, skip: string) =>
  Object.entries(g)
    .filter(([k]) => k !== skip)
    .map(([k, us]) => `${k} ${fmtUs(us)}`)
    .join(', ');

/** On B, the ep group (all-to-alls) holds at least `share` of the exposed comm and more than any other group. */
export function epStaysExposed(share: number): ClaimCheck {
  return ({ a, b }) => {
    const ga = exposedByGroup(a);
    const gb = exposedByGroup(b);
    const ep = gb.ep ?? 0;
    const total = b.metrics.exposedCommUs;
    const others = Object.entries(gb)
      .filter(([k]) => k !== 'ep')
      .map(([, us]) => us);
    const holds = ep >= share * total && others.every((us) => us < ep);
    const text = holds
      ? `Of B's ${fmtUs(total)} exposed communication, ${fmtUs(ep)} (${formatShare(ep, total, 0)}) is on the ep ` +
        `lane: the all-to-alls. The FSDP groups' communication is mostly hidden ` +
        `(B: ${groupList(gb, 'ep')}; A: ${groupList(ga, 'ep')}).`
      : `The all-to-alls are not what stays exposed here: ep ${fmtUs(ep)} of B's ${fmtUs(total)} ` +
        `(${groupList(gb, 'ep')}).`;
    return { holds, text };
  };
}

const allToAlls = (s: SideResult) => s.metrics.collectives.all_to_all;
const bucketedAllToAlls = (s: SideResult) =>
  s.events.filter((e) => e.kind === 'all_to_all' && e.bucketId !== undefined).length;

/** Both sides issue the same all-to-alls, none of them bucketed, while B merges the all-gathers. */
export const allToAllsUnbucketed: ClaimCheck = ({ a, b }) => {
  const n = allToAlls(b);
  const holds = n > 0 && allToAlls(a) === n && bucketedAllToAlls(b) === 0;
  const ag = `all-gathers ${a.metrics.collectives.all_gather} → ${b.metrics.collectives.all_gather}`;
  const text = holds
    ? `Both sides issue ${n} all-to-alls (dispatch counts, dispatch and combine per MoE block, forward and ` +
      `backward): the pass buckets none of them, while it merges the rest (${ag}).`
    : `The all-to-alls change: ${allToAlls(a)} on A, ${n} on B, ${bucketedAllToAlls(b)} of B's bucketed.`;
  return { holds, text };
};
