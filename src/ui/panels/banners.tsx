// Banners: environment (no WebGPU → CPU kernels; not cross-origin isolated → how to fix),
// the simulation's error, a collective mismatch, and import/export notices.

import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { appStore, mismatchOpText, type Notice } from '../../store';
import { useApp } from '../use_app';
import { fmtUs } from '../ui_format';

/** Whether live runs will find WebGPU here: the store's one adapter probe (runtime/gpu asks). */
function useNoWebGpu(): boolean {
  const adapter = useApp((s) => s.liveAdapter);
  useEffect(() => {
    void appStore.getState().probeLiveAdapter();
  }, []);
  return adapter !== null && !adapter.found;
}

/**
 * Notices a panel shows inline, where the action that raised them was (an import's result in the
 * import panel): the corner toast skips them. Keyed by the notice object the store holds.
 */
const INLINE_NOTICES = new WeakSet<Notice>();

/** Raise a notice shown in the panel that calls `useInlineNotice`, not in the corner. */
export function setInlineNotice(n: Notice): void {
  INLINE_NOTICES.add(n);
  appStore.getState().setNotice(n);
}

/** The current notice when it belongs inline. */
export function useInlineNotice(): Notice | null {
  const n = useApp((s) => s.notice);
  return n && INLINE_NOTICES.has(n) ? n : null;
}

/** A notice: three lines at most until "more" shows the rest; in the bottom corner unless inline. */
export function Toast({ kind, text, inline = false }: { kind: 'error' | 'info'; text: string; inline?: boolean }) {
  const [expanded, setExpanded] = useState(false);
  const [clamped, setClamped] = useState(false);
  const ref = useRef<HTMLSpanElement>(null);
  useLayoutEffect(() => {
    const el = ref.current;
    if (el) setClamped(el.scrollHeight > el.clientHeight + 1);
  }, []);
  return (
    <div
      className={`banner toast ${kind}${inline ? ' inline' : ''}${expanded ? ' expanded' : ''}`}
      role={kind === 'error' ? 'alert' : 'status'}
      data-testid={`notice-${kind}`}
    >
      <span className="notice-text" ref={ref}>
        {text}
      </span>
      {clamped && (
        <button type="button" className="link" onClick={() => setExpanded(!expanded)} data-testid="notice-more">
          {expanded ? 'less' : 'more'}
        </button>
      )}
      <button type="button" className="link" onClick={() => appStore.getState().setNotice(null)} aria-label="dismiss">
        ×
      </button>
    </div>
  );
}

/** Without cross-origin isolation there is no SharedArrayBuffer: how to serve the page so there is. */
function CoiBanner() {
  return (
    <div className="banner warn" data-testid="banner-coi">
      Not cross-origin isolated: SharedArrayBuffer is unavailable, so live runs cannot start. Serve the page with{' '}
      <code>Cross-Origin-Opener-Policy: same-origin</code> and <code>Cross-Origin-Embedder-Policy: require-corp</code> (
      <code>npm start</code> does), or let <code>coi-serviceworker.js</code> install and reload the page (static hosts
      such as GitHub Pages).
    </div>
  );
}

export function Banners() {
  const noWebGpu = useNoWebGpu();
  const simError = useApp((s) => s.simError);
  const notice = useApp((s) => s.notice);
  const liveError = useApp((s) => s.live.error);
  const mmA = useApp((s) => s.sides.a?.mismatch);
  const mmB = useApp((s) => s.sides.b?.mismatch);
  const isolated = typeof crossOriginIsolated !== 'undefined' && crossOriginIsolated;
  return (
    <div className="banners">
      {noWebGpu && (
        <div className="banner warn" data-testid="banner-cpu">
          No WebGPU adapter in this browser: live runs use <b>CPU kernels</b> (same numerics, slower). Simulation is
          unaffected.
        </div>
      )}
      {!isolated && <CoiBanner />}
      {simError && (
        <div className="banner error" role="alert" data-testid="banner-sim-error">
          {simError}
        </div>
      )}
      {liveError && (
        <div className="banner error" role="alert" data-testid="banner-live-error">
          {liveError}
        </div>
      )}
      {[mmA && (['A', mmA] as const), mmB && (['B', mmB] as const)].filter(Boolean).map((x) => {
        const [side, m] = x as readonly ['A' | 'B', NonNullable<typeof mmA>];
        return (
          <div key={side} className="banner error" role="alert" data-testid="banner-mismatch">
            <span>
              <b>Collective mismatch on {side}:</b> at collective #{m.seq} rank {m.ranks[0]} issued{' '}
              <code>{mismatchOpText(m.ops[0])}</code> but rank {m.ranks[1]} issued{' '}
              <code>{mismatchOpText(m.ops[1])}</code> (t = {fmtUs(m.timeUs)}). On real GPUs this step would hang; the
              simulation stops there, so {side}'s metrics cover only the part before it. Ranks chose different buckets
              from their own timings; turn cross-rank alignment on (torch aligns estimates across ranks) or set jitter
              to 0.
            </span>
          </div>
        );
      })}
      {notice && !INLINE_NOTICES.has(notice) && <Toast key={notice.text} kind={notice.kind} text={notice.text} />}
    </div>
  );
}
