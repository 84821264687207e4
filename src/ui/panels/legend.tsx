// The timelines' legend: one entry per kind of event the two sides draw (live runs add readback,
// upload and barrier; imports add other collectives and copies), the part of a wait spent on
// a late peer, the exposed band and bucket outlines. Each entry opens its definition on hover,
// focus and tap; the hint below names the gestures of the input at hand.

import { useMemo } from 'react';
import { useApp } from '../use_app';
import type { EventKind } from '../../trace';
import { termById } from '../glossary';
import { navHint, useInputKind } from '../input_kind';
import { EXPOSED_ENTRY, PEER_WAIT_ENTRY, legendFor, paletteFor } from '../palette';
import { DefinedTerm } from '../term';
import { useResolvedTheme } from '../theme';

function defn(id: string): string {
  const t = termById(id);
  return `${t.term}: ${t.text}`;
}

function useDrawnKinds(): ReadonlySet<EventKind> {
  const a = useApp((s) => s.sides.a);
  const b = useApp((s) => s.sides.b);
  return useMemo(() => {
    const out = new Set<EventKind>();
    for (const r of [a, b]) for (const e of r?.events ?? []) out.add(e.kind);
    return out;
  }, [a, b]);
}

export function Legend() {
  const palette = paletteFor(useResolvedTheme());
  const input = useInputKind();
  const entries = legendFor(useDrawnKinds());
  const tapWord = input === 'touch' ? 'tap' : 'click';
  return (
    <div className="legend" data-testid="legend">
      {entries.map((l) => (
        <span key={l.key} className="legend-item" data-kinds={l.kinds.join(' ')}>
          <DefinedTerm def={defn(l.term)} term={l.term}>
            <i style={{ background: palette[l.color] }} />
            {l.label}
          </DefinedTerm>
        </span>
      ))}
      <span className="legend-item" data-kinds="peer_wait">
        <DefinedTerm def={defn(PEER_WAIT_ENTRY.term)} term={PEER_WAIT_ENTRY.term}>
          <i style={{ background: palette[PEER_WAIT_ENTRY.color] }} />
          {PEER_WAIT_ENTRY.label}
        </DefinedTerm>
      </span>
      <span className="legend-item" data-kinds="exposed">
        <DefinedTerm def={defn(EXPOSED_ENTRY.term)} term={EXPOSED_ENTRY.term}>
          <i style={{ background: palette[EXPOSED_ENTRY.color] }} />
          {EXPOSED_ENTRY.label}
        </DefinedTerm>
      </span>
      <span className="legend-item" data-kinds="bucket">
        <DefinedTerm def={defn('bucket')} term="bucket">
          <i className="outline" style={{ borderColor: palette.bucket }} />
          bucket members ({tapWord})
        </DefinedTerm>
      </span>
      <span className="muted nav-hint" data-testid="nav-hint" data-input={input}>
        {navHint(input)}
      </span>
    </div>
  );
}
