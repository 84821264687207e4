// Diff table: every collective of one rank under A matched to B (pipeline/diff.ts), sortable and
// filterable (kind, layer, exposed in B, name), a "top exposed" view, CSV export; a row click
// selects the collective on both timelines and zooms them to it.

import { useMemo, useState } from 'react';
import {
  appStore,
  buildGraph,
  diffBackends,
  diffCsv,
  hidesInB,
  reasonText,
  type BackendDiff,
  type DiffRow,
  type Selection,
  type SideResult,
  type StepGraph,
} from '../../store';
import { useApp } from '../use_app';
import { downloadBlob } from '../download';
import { fmtBytes, fmtUs } from '../ui_format';
import { fixed } from '../../util';

type SortKey = 'order' | 'name' | 'bytes' | 'startA' | 'exposedA' | 'startB' | 'exposedB' | 'delta';

const SORTS: Readonly<Record<SortKey, (r: DiffRow, i: number) => number | string>> = {
  order: (_r, i) => i,
  name: (r) => r.name,
  bytes: (r) => r.bytes,
  startA: (r) => r.a?.startUs ?? Infinity,
  exposedA: (r) => r.a?.exposedUs ?? 0,
  startB: (r) => r.b?.startUs ?? Infinity,
  exposedB: (r) => r.b?.exposedUs ?? 0,
  delta: (r) => r.deltaExposedUs,
};

const TOP_N = 20;
const ZOOM_PAD = 0.5; // of the selected span, each side

interface Filters {
  readonly kind: string;
  readonly layer: string;
  readonly exposedInB: boolean;
  readonly search: string;
}

function visibleRows(d: BackendDiff, f: Filters, sort: SortKey, desc: boolean, top: boolean): DiffRow[] {
  const q = f.search.trim().toLowerCase();
  const layer = f.layer.trim() === '' ? null : Number(f.layer);
  const kept = d.rows
    .map((r, i) => ({ r, i }))
    .filter(({ r }) => (f.kind === '' || r.kind === f.kind) && (layer === null || r.layer === layer))
    .filter(({ r }) => (!f.exposedInB || (r.b?.exposedUs ?? 0) > 0) && (q === '' || r.name.toLowerCase().includes(q)));
  const key = top ? SORTS.exposedB : SORTS[sort];
  const dir = top || desc ? -1 : 1;
  kept.sort((x, y) => {
    const a = key(x.r, x.i);
    const b = key(y.r, y.i);
    return (a < b ? -1 : a > b ? 1 : 0) * dir || x.i - y.i;
  });
  return (top ? kept.slice(0, TOP_N) : kept).map((x) => x.r);
}

/** Index of a scheduled collective's event on `rank` in a side's events (-1 if absent). */
function eventIndexOf(side: SideResult, rank: number, node: string | undefined): number {
  if (!node) return -1;
  return side.events.findIndex((e) => e.rank === rank && e.name === node && e.stream !== 'compute');
}

function selectRow(a: SideResult, b: SideResult, rank: number, r: DiffRow): void {
  const ia = eventIndexOf(a, rank, r.a?.node);
  const ib = eventIndexOf(b, rank, r.b?.node);
  const st = appStore.getState();
  if (ia < 0 && ib < 0) return;
  const [side, idx, peer] =
    ia >= 0
      ? (['a', ia, ib >= 0 ? { side: 'b' as const, eventIndex: ib } : undefined] as const)
      : (['b', ib, undefined] as const);
  st.select({ side, eventIndex: idx, ...(peer ? { peer } : {}) });
  const lo = Math.min(r.a?.startUs ?? Infinity, r.b?.startUs ?? Infinity);
  const hi = Math.max(r.a?.endUs ?? -Infinity, r.b?.endUs ?? -Infinity);
  const pad = Math.max(1, (hi - lo) * ZOOM_PAD);
  st.setWindow({ startUs: Math.max(0, lo - pad), endUs: hi + pad });
}

const us = (x: number | null | undefined) => fmtUs(x, { unit: 'µs', digits: 1, bare: true });

/** A side the config's step graph describes: simulated from the config (not a trace, a live run or an FX dump). */
const fromConfig = (s: SideResult | null): s is SideResult & { schedule: NonNullable<SideResult['schedule']> } =>
  !!s && s.source === 'sim' && !!s.schedule && s.clock.startsWith('cost model');

function useDiff(a: SideResult | null, b: SideResult | null, rank: number, open: boolean): BackendDiff | string {
  const config = useApp((s) => s.config);
  // while a new config simulates, the sides still show the old one: wait for them to match
  const simulating = useApp((s) => s.simulating);
  // the original step graph: both sides simulated it from the config (graphs are cached per step config)
  const graph = useMemo<StepGraph | null>(
    () => (open && !simulating && fromConfig(a) ? buildGraph(config) : null),
    [open, simulating, a, config],
  );
  return useMemo(() => {
    if (!open) return '';
    if (simulating) return 'simulating…';
    if (!fromConfig(a) || !fromConfig(b) || !graph)
      return 'The diff needs both timelines simulated from the config (not an imported trace, FX dump or live run).';
    const input = (s: typeof a) => ({
      backend: s.backend,
      graph,
      schedule: s.schedule,
      events: s.events,
    });
    return diffBackends(input(a), input(b), rank);
  }, [open, simulating, a, b, graph, rank]);
}

function Header({
  k,
  label,
  sort,
  desc,
  onSort,
}: {
  k: SortKey;
  label: string;
  sort: SortKey;
  desc: boolean;
  onSort: (k: SortKey) => void;
}) {
  const aria = sort === k ? (desc ? 'descending' : 'ascending') : 'none';
  return (
    <th aria-sort={aria}>
      <button type="button" className="linklike" onClick={() => onSort(k)} data-testid={`diff-sort-${k}`}>
        {label}
        {sort === k ? (desc ? ' ▼' : ' ▲') : ''}
      </button>
    </th>
  );
}

interface SortProps {
  readonly sort: SortKey;
  readonly desc: boolean;
  readonly onSort: (k: SortKey) => void;
}

/** The sort column and direction, and the "top exposed" view (a click on a header leaves it). */
function useSort() {
  const [sort, setSort] = useState<SortKey>('order');
  const [desc, setDesc] = useState(false);
  const [top, setTop] = useState(false);
  const onSort = (k: SortKey) => {
    setTop(false);
    if (k === sort) setDesc(!desc);
    else {
      setSort(k);
      setDesc(k.startsWith('exposed') || k === 'bytes');
    }
  };
  return { sort, desc, top, setTop, onSort };
}

function DiffHead(p: SortProps) {
  return (
    <thead>
      <tr>
        <Header k="name" label="collective" {...p} />
        <th>kind</th>
        <th>layer</th>
        <Header k="bytes" label="bytes" {...p} />
        <th>bucket B</th>
        <Header k="startA" label="start A µs" {...p} />
        <Header k="exposedA" label="exposed A µs" {...p} />
        <Header k="startB" label="start B µs" {...p} />
        <Header k="exposedB" label="exposed B µs" {...p} />
        <Header k="delta" label="Δ µs" {...p} />
        <th>what hides it in B</th>
        <th>reason</th>
      </tr>
    </thead>
  );
}

/** One collective under A and B; a click selects it on both timelines. */
function DiffRowView({ row, picked, onPick }: { row: DiffRow; picked: boolean; onPick: () => void }) {
  return (
    <tr
      data-name={row.name}
      aria-selected={picked}
      className={picked ? 'selected' : undefined}
      onClick={onPick}
      style={{ cursor: 'pointer' }}
    >
      <td>{row.name}</td>
      <td>{row.kind}</td>
      <td>{row.layer ?? ''}</td>
      <td>{fmtBytes(row.bytes)}</td>
      <td>{row.b?.bucketId === null || !row.b ? '' : `#${row.b.bucketId} (${row.b.bucketSize})`}</td>
      <td>{us(row.a?.startUs)}</td>
      <td data-col="exposedA">{us(row.a?.exposedUs)}</td>
      <td>{us(row.b?.startUs)}</td>
      <td data-col="exposedB">{us(row.b?.exposedUs)}</td>
      <td>{fixed(row.deltaExposedUs, 1)}</td>
      <td>{hidesInB(row)}</td>
      <td title={row.reasons.map((x) => reasonText(x)).join(' ')}>{row.reasons.map((x) => x.code).join(', ')}</td>
    </tr>
  );
}

function DiffSummary({ d }: { d: BackendDiff }) {
  return (
    <p className="small" data-testid="diff-summary">
      rank {d.rank}: {d.rows.length} collectives · exposed {fmtUs(d.exposedUsA)} under {d.backendA},{' '}
      {fmtUs(d.exposedUsB)} under {d.backendB}
      {d.unmatchedA + d.unmatchedB ? ` · unmatched: ${d.unmatchedA} in A, ${d.unmatchedB} in B` : ''}
    </p>
  );
}

/** The rank whose collectives are compared (the ranks of side A's events). */
function RankPicker({
  rank,
  ranks,
  setRank,
}: {
  rank: number;
  ranks: readonly number[];
  setRank: (r: number) => void;
}) {
  return (
    <label>
      rank{' '}
      <select value={rank} onChange={(e) => setRank(Number(e.target.value))} data-testid="diff-rank">
        {ranks.map((k) => (
          <option key={k} value={k}>
            {k}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The filters on kind (the kinds the diff holds: all-to-alls on an MoE run), layer, exposure in B and name. */
function FilterInputs({ f, setF, kinds }: { f: Filters; setF: (f: Filters) => void; kinds: readonly string[] }) {
  return (
    <>
      <label>
        kind{' '}
        <select value={f.kind} onChange={(e) => setF({ ...f, kind: e.target.value })} data-testid="diff-kind">
          <option value="">all</option>
          {kinds.map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
      </label>
      <label>
        layer{' '}
        <input
          type="number"
          min={0}
          value={f.layer}
          onChange={(e) => setF({ ...f, layer: e.target.value })}
          data-testid="diff-layer"
          style={{ width: '4em' }}
        />
      </label>
      <label>
        <input
          type="checkbox"
          checked={f.exposedInB}
          onChange={(e) => setF({ ...f, exposedInB: e.target.checked })}
          data-testid="diff-exposed-b"
        />{' '}
        exposed in B
      </label>
      <input
        type="search"
        placeholder="name"
        value={f.search}
        onChange={(e) => setF({ ...f, search: e.target.value })}
        data-testid="diff-search"
        aria-label="filter by name"
      />
    </>
  );
}

/** The "top exposed" toggle, the CSV of the rows shown, and how many are shown. */
function ViewButtons({
  top,
  setTop,
  shown,
  total,
}: {
  top: boolean;
  setTop: (t: boolean) => void;
  shown: readonly DiffRow[];
  total: number;
}) {
  const csv = () => downloadBlob(new Blob([diffCsv(shown, reasonText)], { type: 'text/csv' }), 'fsdp-sim-diff.csv');
  return (
    <>
      <button type="button" aria-pressed={top} onClick={() => setTop(!top)} data-testid="diff-top">
        Top {TOP_N} exposed in B
      </button>
      <button type="button" onClick={csv} data-testid="diff-csv">
        Export CSV
      </button>
      <span className="muted" data-testid="diff-count">
        {shown.length} of {total} rows
      </span>
    </>
  );
}

/** Whether a row is the collective selected on timeline A (on the rank shown). */
function isPicked(a: SideResult | null, selection: Selection | null, rank: number, row: DiffRow): boolean {
  const selA = selection?.side === 'a' ? selection.eventIndex : -1;
  return !!a && selA >= 0 && a.events[selA]?.name === row.a?.node && a.events[selA]?.rank === rank;
}

export function DiffTable() {
  const sides = useApp((s) => s.sides);
  const selection = useApp((s) => s.selection);
  const [open, setOpen] = useState(false);
  const [rank, setRank] = useState(0);
  const [f, setF] = useState<Filters>({ kind: '', layer: '', exposedInB: false, search: '' });
  const { sort, desc, top, setTop, onSort } = useSort();
  const worldRanks = sides.a ? [...new Set(sides.a.events.map((e) => e.rank))].sort((x, y) => x - y) : [0];
  const r = worldRanks.includes(rank) ? rank : (worldRanks[0] ?? 0);
  const d = useDiff(sides.a, sides.b, r, open);
  const shown = typeof d === 'string' ? [] : visibleRows(d, f, sort, desc, top);
  return (
    <details
      className="panel diff-panel"
      data-testid="diff-panel"
      open={open}
      onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}
    >
      <summary data-testid="diff-toggle">
        <h2>Diff A → B, collective by collective</h2>
      </summary>
      {typeof d === 'string' ? (
        <p className="muted small">{d}</p>
      ) : (
        <>
          <DiffSummary d={d} />
          <div className="diff-filters small">
            <RankPicker rank={r} ranks={worldRanks} setRank={setRank} />
            <FilterInputs f={f} setF={setF} kinds={[...new Set(d.rows.map((x) => x.kind))]} />
            <ViewButtons top={top} setTop={setTop} shown={shown} total={d.rows.length} />
          </div>
          <div className="diff-scroll">
            <table className="diff-table small" data-testid="diff-table">
              <DiffHead sort={sort} desc={desc} onSort={onSort} />
              <tbody>
                {shown.map((row) => (
                  <DiffRowView
                    key={row.name}
                    row={row}
                    picked={isPicked(sides.a, selection, r, row)}
                    onPick={() => sides.a && sides.b && selectRow(sides.a, sides.b, r, row)}
                  />
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </details>
  );
}
