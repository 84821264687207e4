// "Learn one layer": walk one transformer block's forward and backward under both backends, op
// by op (slider, Prev/Next, Play/Pause), both sides on the same op of the step graph (pairWalks:
// matched by what it computes, not by position, since the schedules order ops differently). Each
// side shows that op, the waits and copies its schedule ran just before it, the collectives in
// flight and the memory held, on a strip of the block's ops and a memory sparkline; the timelines
// follow the op on both sides at a readable zoom (B's is selected there).

import { useEffect, useMemo, useRef, useState } from 'react';
import { appStore, type Side, type SideResult } from '../../store';
import { useApp } from '../use_app';
import { fmtBytes, fmtUs } from '../ui_format';
import { paletteFor } from '../palette';
import { useResolvedTheme } from '../theme';
import { blocksOf, followWindow, leadIn, pairWalks, walkBlock, type WalkStep } from '../step_walk';

const PLAY_MS = 700;
const STRIP_W = 300;

function Strip({ steps, at, side }: { steps: readonly WalkStep[]; at: number; side: Side }) {
  const palette = paletteFor(useResolvedTheme());
  const w = STRIP_W / Math.max(1, steps.length);
  const mem = steps.map((s) => s.memoryBytes).filter(Number.isFinite);
  const lo = Math.min(...mem);
  const hi = Math.max(...mem);
  const y = (b: number) => 58 - (hi > lo ? ((b - lo) / (hi - lo)) * 24 : 12);
  const line =
    mem.length === steps.length
      ? steps.map((s, i) => `${i ? 'L' : 'M'}${(i + 0.5) * w} ${y(s.memoryBytes)}`).join(' ')
      : '';
  return (
    <svg
      className="walk-strip"
      viewBox={`0 0 ${STRIP_W} 64`}
      role="img"
      data-testid={`walk-strip-${side}`}
      aria-label={`${steps.length} ops of the block, op ${at + 1} current; memory line below`}
    >
      {steps.map((s, i) => (
        <rect
          key={s.eventIndex}
          x={i * w}
          y={4}
          width={Math.max(1, w - 0.5)}
          height={20}
          fill={palette[s.kind as keyof typeof palette] ?? palette.compute}
          opacity={s.phase === 'forward' ? 1 : s.phase === 'backward' ? 0.7 : 0.4}
        />
      ))}
      <rect
        x={at * w - 1}
        y={2}
        width={Math.max(3, w + 2)}
        height={24}
        fill="none"
        stroke={palette.selected}
        strokeWidth={2}
      />
      {line && <path d={line} fill="none" stroke={palette.bucket} strokeWidth={1.5} />}
      {line && <circle cx={(at + 0.5) * w} cy={y(steps[at].memoryBytes)} r={3} fill={palette.selected} />}
    </svg>
  );
}

/** 'waited 311.9 µs on layers.0.feed_forward.w1.weight.wait, copied …': what the schedule ran before the op. */
function LeadIn({ ops }: { ops: readonly WalkStep[] }) {
  if (!ops.length) return null;
  return (
    <p className="small" data-testid="walk-lead-in" data-waits={ops.filter((o) => o.kind === 'wait').length}>
      Just before it:{' '}
      {ops.map((o, k) => (
        <span key={o.eventIndex}>
          {k > 0 && ', '}
          {o.kind === 'wait' ? 'waits' : 'runs'} {fmtUs(o.durUs)} on <code>{o.name}</code>
        </span>
      ))}
    </p>
  );
}

function SideWalk({ side, r, steps, at }: { side: Side; r: SideResult; steps: readonly WalkStep[]; at: number }) {
  if (!steps.length || at < 0) {
    return (
      <div className="walk-side" data-testid={`walk-${side}`} data-index={-1}>
        <p className="muted">
          {steps.length ? 'This schedule does not run this op.' : 'No ops of this block on rank 0.'}
        </p>
      </div>
    );
  }
  const s = steps[at];
  const lead = leadIn(steps, at);
  return (
    <div
      className="walk-side"
      data-testid={`walk-${side}`}
      data-op={s.name}
      data-index={at}
      data-phase={s.phase}
      data-in-flight={s.inFlight.length}
      data-memory={String(s.memoryBytes)}
      data-start={s.startUs}
      data-dur={s.durUs}
      data-lead-waits={lead.filter((o) => o.kind === 'wait').length}
    >
      <div>
        <span className={`side-badge side-${side}`}>{side.toUpperCase()}</span> <b>{r.title}</b>{' '}
        <span className="muted">
          its op {at + 1}/{steps.length} · {s.phase}
        </span>
      </div>
      <Strip steps={steps} at={at} side={side} />
      <p className="walk-now">
        At {fmtUs(s.startUs)} rank 0 runs <code>{s.name}</code> ({fmtUs(s.durUs)}).
      </p>
      <LeadIn ops={lead} />
      <p className="small">
        In flight:{' '}
        {s.inFlight.length ? (
          s.inFlight.map((c, k) => (
            <span key={c.name}>
              {k > 0 && ', '}
              <code>{c.name}</code>
            </span>
          ))
        ) : (
          <span className="muted">no collective</span>
        )}
      </p>
      <p className="small">
        Memory held: <b>{fmtBytes(s.memoryBytes)}</b>
      </p>
    </div>
  );
}

/** 'In this block A waits 6 times (red), B 2 times; a collective is in flight under 3 of A's ops, 9 of B's.' */
function walkSummary(a: readonly WalkStep[], b: readonly WalkStep[]): string {
  const waits = (w: readonly WalkStep[]) => w.filter((s) => s.kind === 'wait').length;
  const busy = (w: readonly WalkStep[]) => w.filter((s) => s.kind !== 'wait' && s.inFlight.length > 0).length;
  const times = (k: number) => `${k} time${k === 1 ? '' : 's'}`;
  return (
    `In this block A waits ${times(waits(a))} (red), B ${times(waits(b))}; a collective is in flight under ` +
    `${busy(a)} of A's ${a.length} ops, ${busy(b)} of B's ${b.length}.`
  );
}

export function StepThrough({ onClose }: { onClose: () => void }) {
  const walk = useWalk();
  const { a, b, walkA, walkB, ia, ib } = walk;
  const shiftUs = followWindow(walkA[ia], walkB[ib])?.shiftUs ?? 0;
  const ref = useRef<HTMLElement>(null);
  useEffect(() => {
    ref.current?.scrollIntoView({ block: 'nearest' });
  }, []); // opened below the fold: bring it up
  useFollowOp(walk);
  usePlayback(walk);
  return (
    <section className="panel step-through" data-testid="step-through" aria-labelledby="walk-title" ref={ref}>
      <div className="panel-head">
        <h2 id="walk-title">Learn one layer: block {walk.k}, forward, backward, optimizer</h2>
        <button
          type="button"
          className="link"
          onClick={onClose}
          data-testid="walk-close"
          aria-label="close the step-through"
        >
          close
        </button>
      </div>
      <WalkControls walk={walk} />
      <div className="walk-sides">
        {a && <SideWalk side="a" r={a} steps={walkA} at={ia} />}
        {b && <SideWalk side="b" r={b} steps={walkB} at={ib} />}
      </div>
      {shiftUs !== 0 && (
        <p className="muted small" data-testid="walk-shift">
          B runs this op {fmtUs(Math.abs(shiftUs))} {shiftUs < 0 ? 'earlier' : 'later'} than A, so B's timeline is drawn
          shifted by that much to show it at the same zoom; each axis gives its own side's times.
        </p>
      )}
      <p className="muted small" data-testid="walk-summary">
        Each step is one op of the block's step graph, run by both sides (in A's order). Each strip is that side's ops
        on rank 0 in time order, waits and copies included (coloured by kind; faded: backward, palest: optimizer); the
        line below it is the memory held. {walkSummary(walkA, walkB)}
      </p>
    </section>
  );
}

/** The walk's state: the block shown, both sides' ops in it, the pair of ops at the cursor, playing or not. */
function useWalk() {
  const a = useApp((s) => s.sides.a);
  const b = useApp((s) => s.sides.b);
  const blocks = useMemo(() => blocksOf(b?.events ?? a?.events ?? []), [a, b]);
  const [block, setBlock] = useState(0);
  const [i, setI] = useState(0);
  const [playing, setPlaying] = useState(false);
  const k = blocks.includes(block) ? block : (blocks[0] ?? 0);
  const walkA = useMemo(() => (a ? walkBlock(a.events, a.memory, k) : []), [a, k]);
  const walkB = useMemo(() => (b ? walkBlock(b.events, b.memory, k) : []), [b, k]);
  const pairs = useMemo(() => pairWalks(walkA, walkB), [walkA, walkB]);
  const n = pairs.length;
  const at = Math.min(i, Math.max(0, n - 1));
  const pair = pairs[at];
  const [ia, ib] = pair ? [pair.a, pair.b] : [-1, -1];
  return { a, b, blocks, k, setBlock, setI, playing, setPlaying, walkA, walkB, n, at, ia, ib };
}

type Walk = ReturnType<typeof useWalk>;

/** What the op at the cursor does to the timelines, and what closing the walk undoes. */
function useFollowOp({ walkA, walkB, ia, ib }: Walk): void {
  useEffect(() => () => appStore.getState().setShiftB(0), []); // closed: the timelines share one window again
  useEffect(() => {
    // follow the op on both timelines at a readable zoom; B's run of it is selected
    const sa = walkA[ia];
    const sb = walkB[ib];
    const f = followWindow(sa, sb);
    if (!f) return;
    const st = appStore.getState();
    st.setWindow(f.window);
    st.setShiftB(f.shiftUs);
    if (sb) st.select({ side: 'b', eventIndex: sb.eventIndex });
    else if (sa) st.select({ side: 'a', eventIndex: sa.eventIndex });
  }, [walkA, walkB, ia, ib]);
}

/** Play steps one op every PLAY_MS and stops at the block's last op. */
function usePlayback({ playing, setPlaying, setI, at, n }: Walk): void {
  useEffect(() => {
    if (playing && at >= n - 1) setPlaying(false); // played to the end of the block
  }, [playing, at, n, setPlaying]);
  useEffect(() => {
    if (!playing) return;
    const id = setInterval(() => setI((x) => Math.min(x + 1, n - 1)), PLAY_MS);
    return () => clearInterval(id);
  }, [playing, n, setI]);
}

/** Block, Prev, Play/Pause, Next and the slider over the block's ops. */
function WalkControls({ walk }: { walk: Walk }) {
  const { k, blocks, setBlock, setI, playing, setPlaying, at, n } = walk;
  return (
    <div className="row walk-controls">
      <label>
        block{' '}
        <select
          value={k}
          onChange={(e) => {
            setBlock(Number(e.target.value));
            setI(0);
          }}
          data-testid="walk-block"
        >
          {blocks.map((x) => (
            <option key={x} value={x}>
              layers.{x}
            </option>
          ))}
        </select>
      </label>
      <button
        type="button"
        onClick={() => setI(Math.max(0, at - 1))}
        disabled={at === 0}
        data-testid="walk-prev"
        aria-label="previous op"
      >
        ◀ Prev
      </button>
      <button type="button" onClick={() => setPlaying(!playing)} data-testid="walk-play" aria-pressed={playing}>
        {playing ? 'Pause' : 'Play'}
      </button>
      <button
        type="button"
        onClick={() => setI(Math.min(n - 1, at + 1))}
        disabled={at >= n - 1}
        data-testid="walk-next"
        aria-label="next op"
      >
        Next ▶
      </button>
      <input
        type="range"
        min={0}
        max={Math.max(0, n - 1)}
        value={at}
        onChange={(e) => setI(Number(e.target.value))}
        aria-label="op in the block"
        data-testid="walk-slider"
      />
    </div>
  );
}
