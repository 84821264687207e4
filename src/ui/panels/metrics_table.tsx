// Metrics table: HTA-style metrics of A and B side by side with B's change against A. Row and
// column heads open their definition on hover, focus and tap; each row says how it combines the
// ranks (trace/metrics.ts aggregateMetrics, pipeline/figures.ts); sides on different clocks get no
// delta column; a side that hangs shows no full-step figure, and its others as "to the hang".

import { MAX_RANKS, activationCheckpointingOf, describeHbmFit, type SimConfig } from '../../config';
import type { HardwareName } from '../../estimate';
import { MODEL_PRESETS, paramCount } from '../../model';
import { useMemo } from 'react';
import { exposedCommByGroup, type SideResult } from '../../store';
import { useApp } from '../use_app';
import { COMM_KINDS, COMM_LABELS, type TraceMetrics } from '../../trace';
import { type LiveContext, unlikeness } from '../like_runs';
import { fmtBytes, fmtDelta, fmtPct, fmtUs } from '../ui_format';
import { MEMORY_NAMES, termById } from '../glossary';
import { type NamedHbmFit, sideHbmFit } from '../hbm';
import { DefinedTerm } from '../term';
import { MISSING, fixed } from '../../util';

interface Row {
  readonly key: string;
  readonly term: string; // glossary id of the row's definition
  readonly label: string;
  /** How the row combines the ranks, as the code computes it ('max over ranks'). */
  readonly agg: string;
  /** A figure of the whole step (a hung side has none: 'not a full step'); else it covers the events drawn. */
  readonly fullStep?: boolean;
  readonly get: (m: TraceMetrics, r: SideResult) => number;
  readonly fmt: (v: number) => string;
  readonly lowerIsBetter: boolean;
  /** Shown only when a side has a value above 0 (collectives only imported traces carry). */
  readonly whenNonZero?: boolean;
}

/** How each row combines the ranks: what aggregateMetrics (trace/metrics.ts) and stepFigures compute. */
export const AGGREGATES = {
  span: 'span over ranks',
  mean: 'mean over ranks',
  pooled: 'pooled over ranks',
  max: 'max over ranks',
  rank0: "rank 0's schedule",
} as const;

export const ROWS: readonly Row[] = [
  {
    key: 'step',
    term: 'step',
    label: 'step time',
    agg: AGGREGATES.span,
    fullStep: true,
    get: (m) => m.stepTimeUs,
    fmt: fmtUs,
    lowerIsBetter: true,
  },
  {
    key: 'exposed',
    term: 'exposed',
    label: 'exposed comm',
    agg: AGGREGATES.mean,
    fmt: fmtUs,
    lowerIsBetter: true,
    get: (m) => m.exposedCommUs,
  },
  {
    key: 'overlap',
    term: 'overlap',
    label: 'overlap',
    agg: AGGREGATES.pooled,
    get: (m) => m.overlapPct,
    fmt: fmtPct,
    lowerIsBetter: false,
  },
  {
    key: 'idle',
    term: 'idle',
    label: 'idle',
    agg: AGGREGATES.mean,
    get: (m) => m.idleUs,
    fmt: fmtUs,
    lowerIsBetter: true,
  },
  // live runs and Kineto imports may carry no memory curve: unknown, not zero
  {
    key: 'peak',
    term: 'peak',
    label: MEMORY_NAMES.live,
    agg: AGGREGATES.max,
    fmt: fmtBytes,
    lowerIsBetter: true,
    get: (m, r) => (r.memory.length ? m.peakMemoryBytes : NaN),
  },
  // the caching allocator's peaks, as torch reports them (simulated sides only), over the whole schedule
  {
    key: 'peak_allocated',
    term: 'peak_allocated',
    label: MEMORY_NAMES.allocated,
    agg: AGGREGATES.rank0,
    fullStep: true,
    fmt: fmtBytes,
    lowerIsBetter: true,
    whenNonZero: true,
    get: (_m, r) => r.allocator?.peakAllocatedBytes ?? NaN,
  },
  {
    key: 'peak_reserved',
    term: 'peak_reserved',
    label: MEMORY_NAMES.reserved,
    agg: AGGREGATES.rank0,
    fullStep: true,
    fmt: fmtBytes,
    lowerIsBetter: true,
    whenNonZero: true,
    get: (_m, r) => r.allocator?.peakReservedBytes ?? NaN,
  },
  {
    key: 'ag',
    term: 'all_gather',
    label: '# all-gather',
    agg: AGGREGATES.max,
    fmt: String,
    lowerIsBetter: true,
    get: (m) => m.collectives.all_gather,
  },
  {
    key: 'rs',
    term: 'reduce_scatter',
    label: '# reduce-scatter',
    agg: AGGREGATES.max,
    fmt: String,
    lowerIsBetter: true,
    get: (m) => m.collectives.reduce_scatter,
  },
  ...COMM_KINDS.filter((k) => k !== 'all_gather' && k !== 'reduce_scatter').map(
    (k): Row => ({
      key: k,
      term: 'other_collectives',
      label: `# ${COMM_LABELS[k]}`,
      agg: AGGREGATES.max,
      fmt: String,
      lowerIsBetter: true,
      whenNonZero: true,
      get: (m) => m.collectives[k],
    }),
  ),
];

/** A side's cell: MISSING when unknown; on a side that hangs, 'not a full step' or the figure 'to the hang'. */
export function cellText(r: Pick<Row, 'fmt' | 'fullStep'>, side: SideResult | null | undefined, v: number): string {
  if (side?.mismatch && r.fullStep) return 'not a full step';
  if (!side || !Number.isFinite(v)) return MISSING;
  return side.mismatch ? `${r.fmt(v)} to the hang` : r.fmt(v);
}

/**
 * On a mesh (more than one comm group): one 'exposed on <group>' row per group, placed after
 * 'exposed comm' — the first rank's time that group's stream runs with no compute under it.
 */
function groupRows(sides: readonly (SideResult | null | undefined)[]): Row[] {
  const exposure = new Map<SideResult, Record<string, number>>();
  for (const r of sides) if (r && r.events.length > 0) exposure.set(r, exposedCommByGroup(r.events[0].rank, r.events));
  const groups = [...new Set([...exposure.values()].flatMap((e) => Object.keys(e)))];
  if (groups.length < 2) return [];
  const firstRanks = [...new Set([...exposure.keys()].map((r) => r.events[0].rank))];
  const agg = firstRanks.length === 1 ? `rank ${firstRanks[0]}` : "each side's first rank";
  return groups.map(
    (g): Row => ({
      key: `exposed:${g}`,
      term: 'exposed',
      label: `exposed on ${g}`,
      agg,
      fmt: fmtUs,
      lowerIsBetter: true,
      get: (_m, r) => exposure.get(r)?.[g] ?? 0,
    }),
  );
}

/** ROWS with the per-group rows after 'exposed comm'. */
function withGroupRows(extra: readonly Row[]): readonly Row[] {
  if (extra.length === 0) return ROWS;
  const at = ROWS.findIndex((r) => r.key === 'exposed') + 1;
  return [...ROWS.slice(0, at), ...extra, ...ROWS.slice(at)];
}

/** Column heads stay short: 'aot_eager_autobucketing' → 'autobucketing' (full name in the tooltip). */
function shortTitle(t: string | undefined): string {
  return t ? t.replace(/^aot_eager_(?=\w)/, '') : MISSING;
}

/** Sides whose peak exceeds the hardware's HBM (unknown peaks make no claim). */
interface OverHbm {
  readonly side: string;
  readonly fit: NamedHbmFit;
  readonly r: SideResult;
}

function overHbm(sides: readonly [string, SideResult | null | undefined][], hardware: HardwareName): OverHbm[] {
  return sides.flatMap(([side, r]) => {
    const fit = sideHbmFit(r, hardware);
    return !r || !fit || fit.fits ? [] : [{ side, fit, r }];
  });
}

/** `A peak reserved 84.57 GiB > h100 HBM 79.18 GiB (80 GB), with peak allocated 80.10 GiB`. */
function describeOver(o: OverHbm): string {
  const a = o.r.allocator;
  const allocated = a === undefined ? '' : `, with ${MEMORY_NAMES.allocated} ${fmtBytes(a.peakAllocatedBytes)}`;
  return `${o.side} ${describeHbmFit(o.fit, o.fit.what)}${allocated}`;
}

/** fp32 master weights + fp32 gradients + two fp32 AdamW moments: the sharded state per parameter. */
const SHARDED_BYTES_PER_PARAM = 16;
/** More ranks only help when the sharded state is a real part of the peak. */
const SHARD_SHARE_WORTH_IT = 0.1;

/** Advice for a peak over HBM: only the levers this config has not pulled and that would help. */
function hbmAdvice(cfg: SimConfig, peakBytes: number): string {
  const levers: string[] = [];
  if (activationCheckpointingOf(cfg) !== 'full') {
    levers.push('full activation checkpointing (activationCheckpointing=full)');
  }
  const shardBytes = (paramCount(MODEL_PRESETS[cfg.model]) * SHARDED_BYTES_PER_PARAM) / cfg.ranks;
  if (cfg.ranks < MAX_RANKS && shardBytes > SHARD_SHARE_WORTH_IT * peakBytes) {
    levers.push('more ranks (smaller shards)');
  }
  if (cfg.localBatch === null || cfg.localBatch > 1) levers.push('a smaller local batch');
  // TP splits the weights, the activations and the logits (needs the heads to divide: 8 suits every llama3 preset)
  const tpFits = cfg.ranks % 8 === 0 && MODEL_PRESETS[cfg.model].nHeads % 8 === 0;
  if (cfg.parallelism.tensor_parallel_degree === 1 && tpFits) {
    levers.push('tensor parallel (parallelism.tensor_parallel_degree=8)');
  }
  return levers.length
    ? `${levers.join(', ').replace(/, ([^,]*)$/, ' or $1')} would lower ${MEMORY_NAMES.reserved}.`
    : 'This config already uses every lever fsdp-sim models; torchtitan adds pipeline parallelism here, ' +
        'which fsdp-sim does not model.';
}

/** B vs A: points for the overlap (a percent already), else the relative change. */
function deltaText(key: string, va: number, vb: number): string {
  if (key !== 'overlap') return fmtDelta(va, vb);
  return Number.isFinite(va - vb) ? `${vb - va >= 0 ? '+' : '−'}${fixed(Math.abs(vb - va), 1)} pt` : MISSING;
}

/** ' · hangs' after the column head of a side whose step hangs. */
function hangsMark(r: SideResult | null | undefined) {
  return r?.mismatch ? (
    <span className="warn-text small" data-testid="metrics-hangs">
      {' '}
      · hangs
    </span>
  ) : null;
}

const DELTA_DEF = "B vs A: B's change against A, relative (%) or in points (pt); green: better, red: worse.";

function headTitle(r: Row): string {
  const t = termById(r.term);
  return `${t.term}: ${t.text}`;
}

export function MetricsTable() {
  const a = useApp((s) => s.sides.a);
  const b = useApp((s) => s.sides.b);
  const cfg = useApp((s) => s.config);
  const liveSide = useApp((s) => s.live.side);
  const device = useApp((s) => s.live.device);
  const over = overHbm(
    [
      ['A', a],
      ['B', b],
    ],
    cfg.hardware,
  );
  const live: LiveContext = { timing: cfg.live.timing, side: liveSide, device };
  const unlike = a && b ? unlikeness(a, b, live) : null; // only like runs are compared (like_runs.ts)
  const comparable = unlike === null;
  const rows = useMemo(() => withGroupRows(groupRows([a, b])), [a, b]);
  return (
    <section className="panel metrics" data-testid="metrics">
      <h2>
        Metrics <span className="muted">(HTA definitions; each row says how it combines the ranks)</span>
      </h2>
      <table>
        <MetricsHead a={a} b={b} />
        <tbody>
          {rows.map((r) => (
            <MetricRow key={r.key} row={r} a={a} b={b} comparable={comparable} peakOverHbm={over.length > 0} />
          ))}
        </tbody>
      </table>
      {unlike && (
        <p className="small note" data-testid="metrics-clock-note" data-kind={unlike.kind}>
          No B-vs-A change: {unlike.text}
        </p>
      )}
      {over.length > 0 && <HbmWarning over={over} cfg={cfg} />}
      {(a?.mismatch || b?.mismatch) && <HangNote a={a} />}
    </section>
  );
}

type Side = SideResult | null | undefined;

/** The column heads: each side's backend (short name, full in the tooltip), then B vs A. */
function MetricsHead({ a, b }: { a: Side; b: Side }) {
  return (
    <thead>
      <tr>
        <th />
        <th title={a?.title}>
          <span className="side-badge side-a">A</span> {shortTitle(a?.title)}
          {hangsMark(a)}
        </th>
        <th title={b?.title}>
          <span className="side-badge side-b">B</span> {shortTitle(b?.title)}
          {hangsMark(b)}
        </th>
        <th>
          <DefinedTerm def={DELTA_DEF}>B vs A</DefinedTerm>
        </th>
      </tr>
    </thead>
  );
}

interface MetricRowProps {
  readonly row: Row;
  readonly a: Side;
  readonly b: Side;
  readonly comparable: boolean;
  /** A side's peak is over HBM: the peak rows are marked. */
  readonly peakOverHbm: boolean;
}

/** One metric of both sides and B's change against A; none for a row shown only when non-zero and zero on both. */
function MetricRow({ row: r, a, b, comparable, peakOverHbm }: MetricRowProps) {
  const va = a && !(a.mismatch && r.fullStep) ? r.get(a.metrics, a) : NaN;
  const vb = b && !(b.mismatch && r.fullStep) ? r.get(b.metrics, b) : NaN;
  if (r.whenNonZero && !(va > 0) && !(vb > 0)) return null;
  const both = comparable && Number.isFinite(va) && Number.isFinite(vb) && va !== vb;
  const better = both && vb < va === r.lowerIsBetter;
  const worse = both && !better;
  return (
    <tr data-metric={r.key} className={r.key.startsWith('peak') && peakOverHbm ? 'warn-text' : undefined}>
      <th data-agg={r.agg}>
        <DefinedTerm def={headTitle(r)} term={r.term}>
          {r.label}
        </DefinedTerm>{' '}
        <span className="muted small">({r.agg})</span>
      </th>
      <td data-side="a" data-value={String(va)} data-hung={a?.mismatch ? '' : undefined}>
        {cellText(r, a, va)}
      </td>
      <td data-side="b" data-value={String(vb)} data-hung={b?.mismatch ? '' : undefined}>
        {cellText(r, b, vb)}
      </td>
      <td className={better ? 'better' : worse ? 'worse' : ''} data-delta={r.key}>
        {comparable ? deltaText(r.key, va, vb) : MISSING}
      </td>
    </tr>
  );
}

/** Which sides do not fit in HBM, and the levers that would lower the highest peak. */
function HbmWarning({ over, cfg }: { over: readonly OverHbm[]; cfg: SimConfig }) {
  return (
    <p className="small warn-text" data-testid="metrics-hbm-warning" role="alert">
      Does not fit in HBM: {over.map(describeOver).join('; ')}.{' '}
      {hbmAdvice(cfg, Math.max(...over.map((o) => o.fit.peakBytes)))}
    </p>
  );
}

/** A side that hangs has no full-step figure; its others cover its events up to the hang. */
function HangNote({ a }: { a: Side }) {
  return (
    <p className="small warn-text" data-testid="metrics-mismatch-note">
      {a?.mismatch ? 'A' : 'B'} hit a collective mismatch: its step never completes, so it has no full-step figure (step
      time, {MEMORY_NAMES.allocated}, {MEMORY_NAMES.reserved}: not a full step); its other figures cover its ranks'
      events up to where each blocked (to the hang).
    </p>
  );
}
