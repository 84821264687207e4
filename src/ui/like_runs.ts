// Whether A and B may be compared: only like runs are. A delta between a cost-model Llama3-70B
// step and a tiny live step, between WebGPU and CPU kernels, against a stopped run or a step that
// hangs halfway says nothing about the backends, so the headline and the metrics table draw none
// and say why instead.

import type { SideResult } from '../store';
import { clockKind, sameClock } from './clocks';
import { hangWords } from './claims';

export type UnlikeKind = 'hang' | 'stopped' | 'clock' | 'run';

export interface Unlike {
  readonly kind: UnlikeKind;
  /** One sentence saying why no delta is drawn, from the two sides. */
  readonly text: string;
}

const CLOCK_WORDS = { model: 'simulated', measured: 'measured', imported: 'imported' } as const;

/** 'llama3-70b, FSDP 64, cost model' — what a side ran, in the fields where the two differ. */
function runWords(r: SideResult, other: SideResult): string {
  const k = r.run;
  if (!k && r.source === 'live') return 'a live run still running'; // tagged with its key when it ends
  if (!k) return r.source === 'import' ? 'an imported trace' : r.title;
  const o = other.run;
  const parts = [
    !o || o.model !== k.model ? k.model : '',
    !o || o.mesh !== k.mesh ? k.mesh : '',
    !o || o.kernels !== k.kernels ? (k.kernels === 'cost model' ? 'cost model' : `${k.kernels} kernels`) : '',
  ].filter(Boolean);
  return parts.join(', ');
}

function sameRun(a: SideResult, b: SideResult): boolean {
  if (!a.run && !b.run) return true; // two imports: the clock decides
  const [x, y] = [a.run, b.run];
  return !!x && !!y && x.model === y.model && x.mesh === y.mesh && x.kernels === y.kernels;
}

/** Why A and B are not compared, or null when they are like runs on one clock. */
export function unlikeness(a: SideResult, b: SideResult): Unlike | null {
  for (const [name, s] of [['A', a], ['B', b]] as const) {
    const hang = hangWords(s);
    if (hang) return { kind: 'hang', text: `${name} ${hang}: not a full step, so no comparison is drawn.` };
  }
  for (const [name, s] of [['A', a], ['B', b]] as const) {
    if (s.stoppedAfter === undefined) continue;
    const at = s.stoppedAfter > 0 ? `stopped after step ${s.stoppedAfter}` : 'stopped before its first step';
    return { kind: 'stopped', text: `${name} ${at} (a partial live run): not compared.` };
  }
  if (!sameClock(a, b)) {
    const text =
      `A and B are on different clocks (A ${CLOCK_WORDS[clockKind(a)]}, B ${CLOCK_WORDS[clockKind(b)]}): ` +
      'no comparison is drawn. Run both sides live (Run live A+B) to compare measured with measured.';
    return { kind: 'clock', text };
  }
  if (!sameRun(a, b)) {
    const text = `A and B are not like runs (A: ${runWords(a, b)}; B: ${runWords(b, a)}): no comparison is drawn.`;
    return { kind: 'run', text };
  }
  return null;
}
