// One sentence above the timelines stating B's result against A in words, from the metrics
// table's numbers: "autobucketing: step −21.9 %, exposed communication −98.0 %, peak live
// tensors +23.1 %, 581 → 243 all-gathers" (each memory figure by its one name: MEMORY_NAMES).
// Unlike runs (like_runs.ts) get no comparison but the reason: a hung side is headlined as the
// hang, a stopped one as stopped.

import type { SimConfig } from '../../config';
import type { HardwareName } from '../../estimate';
import type { SideResult } from '../../store';
import { useApp } from '../use_app';
import { fmtDelta } from '../ui_format';
import { MEMORY_NAMES } from '../glossary';
import { overHbmWords, sideHbmFit } from '../hbm';
import { type LiveContext, type UnlikeKind, unlikeness } from '../like_runs';

/** 'aot_eager_autobucketing (live)' → 'autobucketing'; the clock is in each timeline's header. */
function shortName(t: string): string {
  return t.replace(/^aot_eager_(?=\w)/, '').replace(/ \(live\)$/, '');
}

/** The headline's parts (exported for tests through the DOM only; pure for reuse). */
function headlineOf(a: SideResult, b: SideResult): string {
  const ma = a.metrics;
  const mb = b.metrics;
  const parts = [
    `step ${fmtDelta(ma.stepTimeUs, mb.stepTimeUs)}`,
    `exposed communication ${fmtDelta(ma.exposedCommUs, mb.exposedCommUs)}`,
  ];
  if (a.memory.length && b.memory.length) {
    parts.push(`${MEMORY_NAMES.live} ${fmtDelta(ma.peakMemoryBytes, mb.peakMemoryBytes)}`);
  }
  parts.push(`${ma.collectives.all_gather} → ${mb.collectives.all_gather} all-gathers`);
  const live = a.source === 'live' && b.source === 'live' ? ' (both live, one clock)' : '';
  return `${shortName(b.title)} vs ${shortName(a.title)}${live}: ${parts.join(', ')}`;
}

/** Sides that do not fit in HBM (' Does not fit in HBM — B: peak reserved 84.57 GiB = 1.07 × h100 HBM …'). */
function overHbm(a: SideResult, b: SideResult, hardware: HardwareName): string {
  const over = (
    [
      ['A', a],
      ['B', b],
    ] as const
  ).flatMap(([name, s]) => {
    const fit = s.source === 'sim' ? sideHbmFit(s, hardware) : null; // a live or imported step ran elsewhere
    return fit && !fit.fits ? [`${name}: ${overHbmWords(fit)}`] : [];
  });
  return over.length ? ` Does not fit in HBM — ${over.join('; ')}.` : '';
}

export interface HeadlineView {
  /** 'compare' (a delta), 'pending', or why there is none (like_runs.ts). */
  readonly kind: 'compare' | 'pending' | UnlikeKind;
  readonly text: string;
}

/** The headline for the sides on screen: a comparison only between like runs. */
export function headlineView(
  a: SideResult | null,
  b: SideResult | null,
  cfg: SimConfig,
  simulating: boolean,
  live?: LiveContext,
): HeadlineView {
  if (!a || !b) {
    const what = `${cfg.model} on ${cfg.ranks} ranks`;
    return { kind: 'pending', text: simulating ? `Simulating ${what}, both backends…` : `Waiting for ${what}.` };
  }
  const unlike = unlikeness(a, b, live ?? { timing: cfg.live.timing, side: 'b', device: '' });
  const fit = overHbm(a, b, cfg.hardware);
  if (unlike) return { kind: unlike.kind, text: `${unlike.text}${fit}` };
  return { kind: 'compare', text: `${headlineOf(a, b)}${fit ? `.${fit}` : ''}` };
}

export function Headline() {
  const a = useApp((s) => s.sides.a);
  const b = useApp((s) => s.sides.b);
  const cfg = useApp((s) => s.config);
  const simulating = useApp((s) => s.simulating);
  const liveSide = useApp((s) => s.live.side);
  const device = useApp((s) => s.live.device);
  const v = headlineView(a, b, cfg, simulating, { timing: cfg.live.timing, side: liveSide, device });
  const muted = v.kind === 'clock' || v.kind === 'run' || v.kind === 'pending';
  const warn = v.kind === 'hang' || v.kind === 'stopped';
  return (
    <p
      className={`headline${muted ? ' muted' : ''}${warn ? ' warn-text' : ''}`}
      data-testid="headline"
      data-kind={v.kind}
      aria-live="polite"
    >
      {v.text}
    </p>
  );
}
