// Banners: environment (no WebGPU → CPU kernels; not cross-origin isolated → how to fix),
// the simulation's error, a collective mismatch, and import/export notices.

import { useEffect, useState } from 'react';
import { appStore, useApp } from '../../store';
import { fmtUs } from '../format';

type GpuState = 'checking' | 'core' | 'compatibility' | 'none';

async function detectWebGpu(): Promise<GpuState> {
  const gpu = (navigator as Navigator & { gpu?: GPU }).gpu;
  if (!gpu) return 'none';
  try {
    if (await gpu.requestAdapter()) return 'core';
    if (await gpu.requestAdapter({ featureLevel: 'compatibility' } as GPURequestAdapterOptions)) return 'compatibility';
  } catch {
    return 'none'; // an adapter request that throws means no usable WebGPU: the banner says so
  }
  return 'none';
}

export function useWebGpuState(): GpuState {
  const [state, setState] = useState<GpuState>('checking');
  useEffect(() => {
    let live = true;
    void detectWebGpu().then((s) => live && setState(s));
    return () => { live = false; };
  }, []);
  return state;
}

export function Banners() {
  const gpu = useWebGpuState();
  const simError = useApp((s) => s.simError);
  const notice = useApp((s) => s.notice);
  const liveError = useApp((s) => s.live.error);
  const mmA = useApp((s) => s.sides.a?.mismatch);
  const mmB = useApp((s) => s.sides.b?.mismatch);
  const isolated = typeof crossOriginIsolated !== 'undefined' && crossOriginIsolated;
  return (
    <div className="banners">
      {gpu === 'none' && (
        <div className="banner warn" data-testid="banner-cpu">No WebGPU adapter in this browser: live runs use <b>CPU kernels</b> (same numerics, slower). Simulation is unaffected.</div>
      )}
      {!isolated && (
        <div className="banner warn" data-testid="banner-coi">
          Not cross-origin isolated: SharedArrayBuffer is unavailable, so live runs cannot start. Serve the page with
          <code>Cross-Origin-Opener-Policy: same-origin</code> and <code>Cross-Origin-Embedder-Policy: require-corp</code>
          (<code>npm start</code> does), or let <code>coi-serviceworker.js</code> install and reload the page (static hosts such as GitHub Pages).
        </div>
      )}
      {simError && <div className="banner error" role="alert" data-testid="banner-sim-error">{simError}</div>}
      {liveError && <div className="banner error" role="alert" data-testid="banner-live-error">{liveError}</div>}
      {[mmA && ['A', mmA] as const, mmB && ['B', mmB] as const].filter(Boolean).map((x) => {
        const [side, m] = x as readonly ['A' | 'B', NonNullable<typeof mmA>];
        return (
          <div key={side} className="banner error" role="alert" data-testid="banner-mismatch">
            <b>Collective mismatch on {side}</b>: at collective #{m.seq} rank {m.ranks[0]} issued <code>{m.ops[0]}</code> but rank {m.ranks[1]} issued <code>{m.ops[1]}</code> (t = {fmtUs(m.timeUs)}). On real GPUs this step would hang; the simulation stops there, so {side}'s metrics cover only the part before it. Ranks chose different buckets from their own timings; turn cross-rank alignment on (torch aligns estimates across ranks) or set jitter to 0.
          </div>
        );
      })}
      {notice && (
        <div className={`banner toast ${notice.kind}`} role={notice.kind === 'error' ? 'alert' : 'status'} data-testid={`notice-${notice.kind}`}>
          {notice.text}
          <button type="button" className="link" onClick={() => appStore.getState().setNotice(null)} aria-label="dismiss">×</button>
        </div>
      )}
    </div>
  );
}
