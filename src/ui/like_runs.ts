// Whether A and B may be compared: only like runs are. A delta between a cost-model Llama3-70B
// step and a tiny live step, between WebGPU and CPU kernels, against a stopped run or a step that
// hangs halfway says nothing about the backends, so the headline and the metrics table draw none
// and say why instead.

import type { SimConfig } from '../config';
import type { LiveState, SideResult } from '../store';
import { clockKind, sameClock } from './clocks';
import { hangWords } from './claims';

export type UnlikeKind = 'hang' | 'stopped' | 'clock' | 'run';

export interface Unlike {
  readonly kind: UnlikeKind;
  /** One sentence saying why no delta is drawn, from the two sides. */
  readonly text: string;
}

const CLOCK_WORDS = { model: 'cost model', measured: 'measured', imported: 'imported' } as const;

/** What the advice and the kernels' names read: the timing a Run live would use, the last live run's kernels. */
export interface LiveContext {
  /** config.live.timing: what Run live A+B would time both sides with. */
  readonly timing: SimConfig['live']['timing'];
  /** The side the last live run drew, and its ranks' kernels as they reported them ('' while unknown). */
  readonly side: LiveState['side'];
  readonly device: string;
}

/** 'auto' as the ranks resolved it, from their kernels' labels ('webgpu: …', 'cpu reference (no WebGPU: …)'). */
function resolvedAuto(device: string): string {
  const labels = device ? device.split(' / ') : [];
  const gpu = labels.some((l) => l.startsWith('webgpu'));
  const cpu = labels.some((l) => l.startsWith('cpu'));
  if (gpu && cpu) return 'WebGPU and CPU kernels (auto: some ranks got no WebGPU device)';
  if (gpu) return 'WebGPU kernels (auto)';
  if (cpu) {
    return labels.some((l) => /no WebGPU/.test(l)) ? 'CPU kernels (auto: no WebGPU device)' : 'CPU kernels (auto)';
  }
  return 'auto kernels (WebGPU, else CPU)';
}

/** A run key's kernels in words: 'cost model', 'WebGPU kernels', 'CPU kernels (auto: no WebGPU device)'. */
export function kernelsWords(kernels: string, device = ''): string {
  if (kernels === 'cost model') return kernels;
  if (kernels === 'webgpu') return 'WebGPU kernels';
  if (kernels === 'cpu') return 'CPU kernels';
  return kernels === 'auto' ? resolvedAuto(device) : `${kernels} kernels`;
}

/**
 * What Run live A+B would give, said only as it will be: with live timing 'measured' both sides are
 * timed in this browser; with 'preset' both replay the cost model, so it is no measured comparison.
 */
export function liveAdvice(timing: LiveContext['timing']): string {
  return timing === 'measured'
    ? 'Run live A+B runs both sides live, timed in this browser: measured with measured.'
    : 'Run live A+B runs both sides live, both timed on the cost model (live timing preset: not measured); ' +
        'set live timing to measured to compare measured with measured.';
}

/** 'llama3-70b, FSDP 64, cost model' — what a side ran, in the fields where the two differ. */
function runWords(r: SideResult, other: SideResult, device: string): string {
  const k = r.run;
  if (!k && r.source === 'live') return 'a live run still running'; // tagged with its key when it ends
  if (!k) return r.source === 'import' ? 'an imported trace' : r.title;
  const o = other.run;
  const parts = [
    !o || o.model !== k.model ? k.model : '',
    !o || o.mesh !== k.mesh ? k.mesh : '',
    !o || o.kernels !== k.kernels ? kernelsWords(k.kernels, device) : '',
  ].filter(Boolean);
  return parts.join(', ');
}

function sameRun(a: SideResult, b: SideResult): boolean {
  if (!a.run && !b.run) return true; // two imports: the clock decides
  const [x, y] = [a.run, b.run];
  return !!x && !!y && x.model === y.model && x.mesh === y.mesh && x.kernels === y.kernels;
}

/**
 * Why A and B are not compared, or null when they are like runs on one clock. With `live` (the
 * headline's and the table's case) an 'auto' live side names the kernels it ran and the advice
 * says what Run live A+B would give.
 */
export function unlikeness(a: SideResult, b: SideResult, live?: LiveContext): Unlike | null {
  for (const [name, s] of [
    ['A', a],
    ['B', b],
  ] as const) {
    const hang = hangWords(s);
    if (hang) return { kind: 'hang', text: `${name} ${hang}: not a full step, so no comparison is drawn.` };
  }
  for (const [name, s] of [
    ['A', a],
    ['B', b],
  ] as const) {
    if (s.stoppedAfter === undefined) continue;
    const at = s.stoppedAfter > 0 ? `stopped after step ${s.stoppedAfter}` : 'stopped before its first step';
    return { kind: 'stopped', text: `${name} ${at} (a partial live run): not compared.` };
  }
  const advice = live ? ` ${liveAdvice(live.timing)}` : '';
  if (!sameClock(a, b)) {
    const text =
      `A and B are on different clocks (A ${CLOCK_WORDS[clockKind(a)]}, B ${CLOCK_WORDS[clockKind(b)]}): ` +
      `no comparison is drawn.${advice}`;
    return { kind: 'clock', text };
  }
  if (!sameRun(a, b)) {
    const dev = (side: LiveState['side']) => (live?.side === side ? live.device : '');
    const text =
      `A and B are not like runs (A: ${runWords(a, b, dev('a'))}; B: ${runWords(b, a, dev('b'))}): ` +
      `no comparison is drawn.${advice}`;
    return { kind: 'run', text };
  }
  return null;
}
