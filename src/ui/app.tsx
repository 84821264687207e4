// The app shell: header (live controls, theme), banners, config panel on the left, the two
// synchronized timelines with legend, then metrics, explain, details, charts, export/import.

import { useEffect } from 'react';
import { appStore, useApp, type ThemeChoice } from '../store';
import { ErrorBoundary } from './error_boundary';
import { LEGEND, paletteFor } from './palette';
import { useResolvedTheme, useThemeAttribute } from './theme';
import { Timeline } from './timeline/timeline';
import { Banners } from './panels/banners';
import { ConfigPanel } from './panels/config_panel';
import { DetailsPanel } from './panels/details_panel';
import { ExplainPanel } from './panels/explain_panel';
import { IoPanel } from './panels/io_panel';
import { LiveBar } from './panels/live_bar';
import { MetricsTable } from './panels/metrics_table';
import { LossChart } from './charts/loss_chart';
import { MemoryChart } from './charts/memory_chart';

/** Keyboard zoom/pan, Perfetto style: W/S zoom in/out, A/D pan. */
const KEY_ZOOM = 0.8;
const KEY_PAN = 0.2;

function isTyping(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  return !!el && (el.tagName === 'INPUT' || el.tagName === 'SELECT' || el.tagName === 'TEXTAREA' || el.isContentEditable);
}

function useKeyboardNav(): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (isTyping(e.target) || e.ctrlKey || e.metaKey || e.altKey) return;
      const s = appStore.getState();
      switch (e.key.toLowerCase()) {
        case 'w': s.zoomBy(KEY_ZOOM); break;
        case 's': s.zoomBy(1 / KEY_ZOOM); break;
        case 'a': s.panBy(-KEY_PAN); break;
        case 'd': s.panBy(KEY_PAN); break;
        case '0': s.fitAll(); break;
        case 'escape': s.select(null); break;
        default: return;
      }
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}

function ThemeToggle() {
  const theme = useApp((s) => s.theme);
  const next: Record<ThemeChoice, ThemeChoice> = { auto: 'dark', dark: 'light', light: 'auto' };
  return (
    <button className="theme-toggle" onClick={() => appStore.getState().setTheme(next[theme])} data-testid="theme-toggle" title="theme: auto → dark → light">
      theme: {theme}
    </button>
  );
}

function Legend() {
  const palette = paletteFor(useResolvedTheme());
  return (
    <div className="legend" data-testid="legend">
      {LEGEND.map((l) => <span key={l.kind}><i style={{ background: palette[l.kind] }} />{l.label}</span>)}
      <span><i className="outline" style={{ borderColor: palette.bucket }} />bucket members (click)</span>
      <span className="muted">wheel/W/S zoom · drag/A/D pan · 0 fit</span>
    </div>
  );
}

export function App() {
  const theme = useResolvedTheme();
  useThemeAttribute(theme);
  useKeyboardNav();
  const simMs = useApp((s) => s.simMs);
  const simulating = useApp((s) => s.simulating);
  return (
    <div className="app">
      <header className="app-header">
        <h1>fsdp-sim</h1>
        <span className="subtitle">SimpleFSDP training step, two backends compared</span>
        {simulating && <span className="busy" data-testid="simulating">simulating…</span>}
        <LiveBar />
        <button onClick={() => appStore.getState().fitAll()} title="fit the whole step (0)">Fit</button>
        <ThemeToggle />
      </header>
      <Banners />
      <div className="layout">
        <aside className="sidebar">
          <ErrorBoundary name="Config"><ConfigPanel /></ErrorBoundary>
        </aside>
        <main className="content">
          <Legend />
          <ErrorBoundary name="Timeline A"><Timeline side="a" label="A" /></ErrorBoundary>
          <ErrorBoundary name="Timeline B"><Timeline side="b" label="B" /></ErrorBoundary>
          <div className="grid-3">
            <ErrorBoundary name="Metrics"><MetricsTable /></ErrorBoundary>
            <ErrorBoundary name="Explain"><ExplainPanel /></ErrorBoundary>
            <ErrorBoundary name="Details"><DetailsPanel /></ErrorBoundary>
          </div>
          <div className="grid-2">
            <ErrorBoundary name="Memory chart"><MemoryChart /></ErrorBoundary>
            <ErrorBoundary name="Loss chart"><LossChart /></ErrorBoundary>
          </div>
          <ErrorBoundary name="Export/import"><IoPanel /></ErrorBoundary>
          <footer className="muted small">simulated both backends in {simMs.toFixed(0)} ms · times in µs from the cost model unless a live run or import says otherwise</footer>
        </main>
      </div>
    </div>
  );
}
