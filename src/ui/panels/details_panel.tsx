// Details of the event clicked on a timeline: op, params, bytes, start, duration, bucket, and
// the backend's reason; for a simulated all-to-all, what it moves and why it is exposed.

import type { SimConfig } from '../../config';
import { type Bucket, type Reason, reasonText } from '../../store';
import type { TraceEvent } from '../../trace';
import { useApp } from '../use_app';
import { fmtBytes, fmtUs } from '../ui_format';
import { plainReason } from '../glossary';
import { type InputKind, useInputKind } from '../input_kind';
import { bucketOf, reasonsForEvent } from '../reason_lookup';
import { allToAllExposure, allToAllMoves } from '../all_to_all_words';

export function DetailsPanel() {
  const selection = useApp((s) => s.selection);
  const input = useInputKind();
  const sides = useApp((s) => s.sides);
  const config = useApp((s) => s.config);
  const r = selection ? sides[selection.side] : null;
  const e = selection && r ? r.events[selection.eventIndex] : undefined;
  if (!r || !e) return <DetailsHint input={input} />;
  const reasons = reasonsForEvent(r.schedule, e);
  return (
    <section className="panel details" data-testid="details">
      <h2>
        Selection <span className="muted">({selection!.side.toUpperCase()})</span>
      </h2>
      <EventFacts e={e} bucket={bucketOf(r.schedule, e)} />
      {e.kind === 'all_to_all' && r.source === 'sim' && <AllToAllFacts e={e} cfg={config} reasons={reasons} />}
      {reasons.length > 0 && <EventReasons reasons={reasons} />}
    </section>
  );
}

/** Nothing selected: how to select, in the words of the hand on the screen. */
function DetailsHint({ input }: { input: InputKind }) {
  const hint =
    input === 'touch'
      ? 'Tap an event on a timeline to see its details. Pinch to zoom, drag to pan.'
      : 'Click an event on a timeline to see its details. Wheel or W/S zoom, drag or A/D pan.';
  return (
    <section className="panel details" data-testid="details">
      <h2>Selection</h2>
      <p className="muted" data-testid="details-hint">
        {hint}
      </p>
    </section>
  );
}

/** What the event is, where and when it ran, and what it moved. */
function EventFacts({ e, bucket: b }: { e: TraceEvent; bucket: Bucket | undefined }) {
  return (
    <dl>
      <dt>name</dt>
      <dd>
        <code>{e.name}</code>
      </dd>
      <dt>kind</dt>
      <dd>
        {e.kind}
        {e.op ? ` · ${e.op}` : ''}
      </dd>
      <dt>rank / stream</dt>
      <dd>
        {e.rank} / {e.stream}
      </dd>
      <dt>start</dt>
      <dd>{fmtUs(e.start)}</dd>
      <dt>duration</dt>
      <dd>{fmtUs(e.dur)}</dd>
      {e.bytes !== undefined && (
        <>
          <dt>bytes</dt>
          <dd>{fmtBytes(e.bytes)}</dd>
        </>
      )}
      {b && (
        <>
          <dt>bucket</dt>
          <dd>
            #{b.id}: {b.members.length} collectives, {fmtBytes(b.bytes)}
          </dd>
        </>
      )}
      {e.params?.length ? (
        <>
          <dt>params</dt>
          <dd className="params">{e.params.join(', ')}</dd>
        </>
      ) : null}
    </dl>
  );
}

/** A simulated MoE all-to-all: what it moves, to whom, and why torch's pass leaves it where it is. */
function AllToAllFacts({ e, cfg, reasons }: { e: TraceEvent; cfg: SimConfig; reasons: readonly Reason[] }) {
  return (
    <dl data-testid="all-to-all-facts">
      <dt>moves</dt>
      <dd>{allToAllMoves(e, cfg)}</dd>
      <dt>exposed?</dt>
      <dd>{allToAllExposure(reasons)}</dd>
    </dl>
  );
}

/** The backend's reasons behind the event (its bucket's), the first six. */
function EventReasons({ reasons }: { reasons: readonly Reason[] }) {
  return (
    <ul className="reasons">
      {reasons.slice(0, 6).map((x) => {
        const text = reasonText(x);
        return (
          <li key={`${x.node}:${x.code}:${text}`}>
            {plainReason(x.code)} <span className="muted">({text})</span> <code>{x.node}</code>
          </li>
        );
      })}
    </ul>
  );
}
