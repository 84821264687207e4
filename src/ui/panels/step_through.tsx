// "Learn one layer": walk one transformer block's forward and backward under both backends, op
// by op (slider, Prev/Next, Play/Pause). Each side shows the current op, the collectives in
// flight, and the memory held, on a strip of the block's ops and a memory sparkline; the shared
// timeline window holds both sides' current op (B's is selected there).

import { useEffect, useMemo, useRef, useState } from 'react';
import { appStore, useApp, type Side, type SideResult } from '../../store';
import { fmtBytes, fmtUs } from '../ui_format';
import { paletteFor } from '../palette';
import { useResolvedTheme } from '../theme';
import { blocksOf, followWindow, walkBlock, type WalkStep } from '../step_walk';

const PLAY_MS = 700;
const STRIP_W = 300;

function Strip({ steps, at, side }: { steps: readonly WalkStep[]; at: number; side: Side }) {
  const palette = paletteFor(useResolvedTheme());
  const w = STRIP_W / Math.max(1, steps.length);
  const mem = steps.map((s) => s.memoryBytes).filter(Number.isFinite);
  const lo = Math.min(...mem);
  const hi = Math.max(...mem);
  const y = (b: number) => 58 - (hi > lo ? ((b - lo) / (hi - lo)) * 24 : 12);
  const line = mem.length === steps.length
    ? steps.map((s, i) => `${i ? 'L' : 'M'}${(i + 0.5) * w} ${y(s.memoryBytes)}`).join(' ')
    : '';
  return (
    <svg className="walk-strip" viewBox={`0 0 ${STRIP_W} 64`} role="img" data-testid={`walk-strip-${side}`}
      aria-label={`${steps.length} ops of the block, op ${at + 1} current; memory line below`}>
      {steps.map((s, i) => (
        <rect key={s.eventIndex} x={i * w} y={4} width={Math.max(1, w - 0.5)} height={20}
          fill={palette[s.kind as keyof typeof palette] ?? palette.compute}
          opacity={s.phase === 'forward' ? 1 : s.phase === 'backward' ? 0.7 : 0.4} />
      ))}
      <rect x={at * w - 1} y={2} width={Math.max(3, w + 2)} height={24} fill="none" stroke={palette.selected}
        strokeWidth={2} />
      {line && <path d={line} fill="none" stroke={palette.bucket} strokeWidth={1.5} />}
      {line && <circle cx={(at + 0.5) * w} cy={y(steps[at].memoryBytes)} r={3} fill={palette.selected} />}
    </svg>
  );
}

function SideWalk({ side, r, steps, i }: { side: Side; r: SideResult; steps: readonly WalkStep[]; i: number }) {
  if (!steps.length) {
    return (
      <div className="walk-side" data-testid={`walk-${side}`}>
        <p className="muted">No ops of this block on rank 0.</p>
      </div>
    );
  }
  const at = Math.min(i, steps.length - 1);
  const s = steps[at];
  const verb = s.kind === 'wait' ? 'waits for' : 'runs';
  return (
    <div className="walk-side" data-testid={`walk-${side}`} data-op={s.name} data-index={at} data-phase={s.phase}
      data-in-flight={s.inFlight.length} data-memory={String(s.memoryBytes)} data-start={s.startUs} data-dur={s.durUs}>
      <div>
        <span className={`side-badge side-${side}`}>{side.toUpperCase()}</span> <b>{r.title}</b>{' '}
        <span className="muted">op {at + 1}/{steps.length} · {s.phase}</span>
      </div>
      <Strip steps={steps} at={at} side={side} />
      <p className="walk-now">At {fmtUs(s.startUs)} rank 0 {verb} <code>{s.name}</code> ({fmtUs(s.durUs)}).</p>
      <p className="small">
        In flight:{' '}
        {s.inFlight.length
          ? s.inFlight.map((c, k) => <span key={c.name}>{k > 0 && ', '}<code>{c.name}</code></span>)
          : <span className="muted">no collective</span>}
      </p>
      <p className="small">Memory held: <b>{fmtBytes(s.memoryBytes)}</b></p>
    </div>
  );
}

/** 'In this block A waits 6 times (red), B 2 times; a collective is in flight under 3 of A's ops, 9 of B's.' */
function walkSummary(a: readonly WalkStep[], b: readonly WalkStep[]): string {
  const waits = (w: readonly WalkStep[]) => w.filter((s) => s.kind === 'wait').length;
  const busy = (w: readonly WalkStep[]) => w.filter((s) => s.kind !== 'wait' && s.inFlight.length > 0).length;
  const times = (k: number) => `${k} time${k === 1 ? '' : 's'}`;
  return `In this block A waits ${times(waits(a))} (red), B ${times(waits(b))}; a collective is in flight under ` +
    `${busy(a)} of A's ${a.length} ops, ${busy(b)} of B's ${b.length}.`;
}

export function StepThrough({ onClose }: { onClose: () => void }) {
  const a = useApp((s) => s.sides.a);
  const b = useApp((s) => s.sides.b);
  const blocks = useMemo(() => blocksOf(b?.events ?? a?.events ?? []), [a, b]);
  const [block, setBlock] = useState(0);
  const [i, setI] = useState(0);
  const [playing, setPlaying] = useState(false);
  const k = blocks.includes(block) ? block : blocks[0] ?? 0;
  const walkA = useMemo(() => (a ? walkBlock(a.events, a.memory, k) : []), [a, k]);
  const walkB = useMemo(() => (b ? walkBlock(b.events, b.memory, k) : []), [b, k]);
  const n = Math.max(walkA.length, walkB.length);
  const at = Math.min(i, Math.max(0, n - 1));

  const ref = useRef<HTMLElement>(null);
  useEffect(() => { ref.current?.scrollIntoView({ block: 'nearest' }); }, []); // opened below the fold: bring it up
  useEffect(() => { // follow on the timelines: one window holding both sides' current op; B's is selected
    const sa = walkA[Math.min(at, walkA.length - 1)];
    const sb = walkB[Math.min(at, walkB.length - 1)];
    const w = followWindow([sa, sb]);
    if (!w) return;
    const st = appStore.getState();
    st.setWindow(w);
    if (sb) st.select({ side: 'b', eventIndex: sb.eventIndex });
  }, [walkA, walkB, at]);
  useEffect(() => {
    if (playing && at >= n - 1) setPlaying(false); // played to the end of the block
  }, [playing, at, n]);
  useEffect(() => {
    if (!playing) return;
    const id = setInterval(() => setI((x) => Math.min(x + 1, n - 1)), PLAY_MS);
    return () => clearInterval(id);
  }, [playing, n]);

  return (
    <section className="panel step-through" data-testid="step-through" aria-labelledby="walk-title" ref={ref}>
      <div className="panel-head">
        <h2 id="walk-title">Learn one layer: block {k}, forward, backward, optimizer</h2>
        <button type="button" className="link" onClick={onClose} data-testid="walk-close"
          aria-label="close the step-through">close</button>
      </div>
      <div className="row walk-controls">
        <label>block <select value={k} onChange={(e) => { setBlock(Number(e.target.value)); setI(0); }}
          data-testid="walk-block">
          {blocks.map((x) => <option key={x} value={x}>layers.{x}</option>)}
        </select></label>
        <button type="button" onClick={() => setI(Math.max(0, at - 1))} disabled={at === 0} data-testid="walk-prev"
          aria-label="previous op">◀ Prev</button>
        <button type="button" onClick={() => setPlaying(!playing)} data-testid="walk-play"
          aria-pressed={playing}>{playing ? 'Pause' : 'Play'}</button>
        <button type="button" onClick={() => setI(Math.min(n - 1, at + 1))} disabled={at >= n - 1}
          data-testid="walk-next" aria-label="next op">Next ▶</button>
        <input type="range" min={0} max={Math.max(0, n - 1)} value={at} onChange={(e) => setI(Number(e.target.value))}
          aria-label="op in the block" data-testid="walk-slider" />
      </div>
      <div className="walk-sides">
        {a && <SideWalk side="a" r={a} steps={walkA} i={at} />}
        {b && <SideWalk side="b" r={b} steps={walkB} i={at} />}
      </div>
      <p className="muted small" data-testid="walk-summary">
        Each strip is the block's ops on rank 0 in time order (coloured by kind; faded: backward, palest: optimizer);
        the line below it is the memory held. {walkSummary(walkA, walkB)}
      </p>
    </section>
  );
}
