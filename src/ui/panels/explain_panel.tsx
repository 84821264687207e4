// Explain panel: pick a collective and read the backend's reasons for what it did with it
// (prefetched or not, bucketed or not, and why). Clicking a collective on a timeline picks it.

import { useEffect, useMemo, useState } from 'react';
import { decisionText, livePlanOf, reasonText, type Side, type SideResult } from '../../store';
import { useApp } from '../use_app';
import { fmtBytes, fmtPct } from '../ui_format';
import { plainReason } from '../glossary';
import { baseName, explainableCollectives } from '../reason_lookup';
import { PresetAssumptions } from './preset_info';

const pct = (x: number) => fmtPct(100 * x);
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

type Bucket = NonNullable<SideResult['schedule']>['buckets'][number];
type Agreement = NonNullable<SideResult['torchAgreement']>[number];

function bucketSentence(b: Bucket, current: string): string {
  const others = b.members
    .filter((m) => m !== current)
    .slice(0, 6)
    .join(', ');
  return (
    `In bucket #${b.id} (${b.kind}, key ${b.key}, ${fmtBytes(b.bytes)}) with ${b.members.length - 1} other ` +
    `collective${b.members.length === 2 ? '' : 's'}: ${others}${b.members.length > 7 ? ', …' : ''}`
  );
}

function agreementWords(a: Agreement): string {
  return (
    `${a.phase} — buckets ${pct(a.bucketAgreement)}, prefetches ${pct(a.prefetchAgreement)}, ` +
    `collectives after ${a.collectivesAfter.torch} (torch) / ${a.collectivesAfter.fsdpSim}`
  );
}

type Schedule = NonNullable<SideResult['schedule']>;
type Reason = Schedule['reasons'][number];
type Collective = NonNullable<Schedule['graph']['nodes'][number]['collective']>;

/** Follows timeline clicks: a clicked collective's side, and its bucket's first member (or itself). */
function useFollowSelection(setSide: (s: Side) => void, setNode: (n: string) => void): void {
  const sides = useApp((s) => s.sides);
  const selection = useApp((s) => s.selection);
  const cfg = useApp((s) => s.config);
  useEffect(() => {
    if (!selection) return;
    const r = sides[selection.side];
    const e = r?.events[selection.eventIndex];
    if (!r || !e || e.kind === 'compute') return;
    setSide(selection.side);
    const sched = r.schedule ?? livePlanOf(r, cfg)?.schedule;
    const b = sched?.buckets.find((x) => x.id === e.bucketId || x.node === baseName(e.name));
    setNode(b ? b.members[0] : baseName(e.name));
  }, [selection, sides, cfg, setSide, setNode]);
}

/** The process group a collective runs on (a mesh has several; a bucket keeps its members' group). */
function GroupLine({ coll }: { coll: Collective }) {
  return (
    <p className="small" data-testid="explain-group">
      {coll.kind.replace('_', '-')} on process group <code>{coll.group}</code>: {coll.groupSize} ranks
      {(coll.groupStride ?? 1) > 1 ? `, ${coll.groupStride} ranks apart` : ', consecutive'}
    </p>
  );
}

function ReasonList({ reasons }: { reasons: readonly Reason[] }) {
  if (reasons.length === 0) return <p className="muted">No decision recorded for this collective.</p>;
  return (
    <ul className="reasons" data-testid="explain-reasons">
      {reasons.map((r) => {
        const text = reasonText(r);
        return (
          <li key={`${r.code}:${text}`} data-code={r.code}>
            <span className="plain">{plainReason(r.code)}</span> <span className="muted">{text}</span>{' '}
            <code>{r.code}</code>
          </li>
        );
      })}
    </ul>
  );
}

/** How far the backend's plan agrees with torch's log, and where it differs on `current`. */
function TorchAgreement({ agreement, current }: { agreement: readonly Agreement[]; current: string }) {
  const fxName = current.replace(/\.bw$/, '');
  const torchSays = agreement.flatMap((a) => a.disagreements).filter((d) => d.collective === fxName);
  return (
    <div className="torch-agreement" data-testid="explain-torch">
      <p className="small">Against torch's log: {agreement.map(agreementWords).join('; ')}.</p>
      {torchSays.length === 0 ? (
        <p className="muted small">For this collective torch logged the same decisions.</p>
      ) : (
        <ul className="reasons" data-testid="explain-torch-disagreements">
          {torchSays.map((d) => (
            <li key={d.what}>
              <b>{d.what}</b> — torch: {decisionText(d.torch)}; fsdp-sim: {decisionText(d.fsdpSim)}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

interface PickerProps {
  readonly side: Side;
  readonly setSide: (s: Side) => void;
  readonly current: string;
  readonly setNode: (n: string) => void;
  readonly names: readonly string[];
}

/** The side and the collective to explain. */
function Pickers({ side, setSide, current, setNode, names }: PickerProps) {
  const sides = useApp((s) => s.sides);
  return (
    <>
      <div className="row">
        <label>
          side{' '}
          <select value={side} onChange={(e) => setSide(e.target.value as Side)} data-testid="explain-side">
            <option value="a">A · {sides.a?.title}</option>
            <option value="b">B · {sides.b?.title}</option>
          </select>
        </label>
      </div>
      <div className="row">
        <label>
          collective{' '}
          <select value={current} onChange={(e) => setNode(e.target.value)} data-testid="explain-node">
            {names.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
      </div>
    </>
  );
}

export function ExplainPanel() {
  const sides = useApp((s) => s.sides);
  const cfg = useApp((s) => s.config);
  const [side, setSide] = useState<Side>('b');
  const [node, setNode] = useState<string>('');
  const livePlan = sides[side]?.schedule ? null : livePlanOf(sides[side], cfg);
  const schedule = sides[side]?.schedule ?? livePlan?.schedule;
  const names = useMemo(() => explainableCollectives(schedule), [schedule]);
  useFollowSelection(setSide, setNode);
  const current = names.includes(node) ? node : (names[0] ?? '');
  const bucket = schedule?.buckets.find((b) => b.members.includes(current));
  const coll = schedule?.graph.nodes.find(
    (n) => n.kind !== 'wait' && (n.name === current || n.collective?.members?.includes(current)),
  )?.collective;
  const agreement = sides[side]?.torchAgreement;
  return (
    <section className="panel explain" data-testid="explain">
      <h2>Explain</h2>
      {!schedule ? (
        <p className="muted">This side has no schedule (imported trace or live events without a plan).</p>
      ) : (
        <>
          <Pickers side={side} setSide={setSide} current={current} setNode={setNode} names={names} />
          {coll && <GroupLine coll={coll} />}
          <ReasonList reasons={schedule.reasons.filter((r) => r.node === current)} />
          {bucket && <p className="bucket-info">{bucketSentence(bucket, current)}</p>}
          {agreement && <TorchAgreement agreement={agreement} current={current} />}
          <p className="muted small">
            {schedule.backend}: {plural(schedule.buckets.length, 'bucket')}, {plural(names.length, 'collective')}{' '}
            explained.
          </p>
          {livePlan && (
            <p className="muted small" data-testid="explain-live-plan">
              Live run: the plan its workers executed (tiny on {sides[side]?.worldSize} ranks).
            </p>
          )}
        </>
      )}
      <PresetAssumptions />
    </section>
  );
}
