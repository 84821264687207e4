// The app shell: header (live controls, stories, help, theme), banners, config panel on the
// left (a drawer below 900 px), the headline and story caption, the two synchronized timelines
// with legend, then metrics, explain, details, glossary, charts, export/import; the tour.
// First screen: A's lanes scroll within what leaves B's first lane in view (useFirstScreenFit).
// Presentation view (`present=1`): bigger type, config tucked into the drawer, a next-story control.

import { useCallback, useEffect, useLayoutEffect, useState } from 'react';
import { appStore, type ThemeChoice } from '../store';
import { useApp } from './use_app';
import { ErrorBoundary } from './error_boundary';
import { GlossaryPanel } from './panels/glossary_panel';
import { Headline } from './panels/headline';
import { StepThrough } from './panels/step_through';
import { StoryCaption, StoryMenu } from './panels/stories_panel';
import { Tour, tourDone } from './panels/tour';
import { useResolvedTheme, useThemeAttribute } from './theme';
import { Timeline } from './timeline/timeline';
import { Banners } from './panels/banners';
import { Legend } from './panels/legend';
import { ConfigPanel } from './panels/config_panel';
import { DetailsPanel } from './panels/details_panel';
import { ExplainPanel } from './panels/explain_panel';
import { IoPanel } from './panels/io_panel';
import { LiveBar } from './panels/live_bar';
import { MetricsTable } from './panels/metrics_table';
import { LossChart } from './charts/loss_chart';
import { MemoryChart } from './charts/memory_chart';
import { DiffTable } from './panels/diff_table';
import { SweepPanel } from './panels/sweep_panel';
import { CalibrationPanel } from './panels/calibration_panel';
import { fmtUs } from './ui_format';
import { applyStory, focusSubject, nextStory } from './story_apply';
import { storyById } from './stories';

/** Keyboard zoom/pan, Perfetto style: W/S zoom in/out, A/D pan. */
const KEY_ZOOM = 0.8;
const KEY_PAN = 0.2;

function isTyping(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  if (!el) return false;
  return el.tagName === 'INPUT' || el.tagName === 'SELECT' || el.tagName === 'TEXTAREA' || el.isContentEditable;
}

function useKeyboardNav(): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (isTyping(e.target) || e.ctrlKey || e.metaKey || e.altKey) return;
      const s = appStore.getState();
      switch (e.key.toLowerCase()) {
        case 'w':
          s.zoomBy(KEY_ZOOM);
          break;
        case 's':
          s.zoomBy(1 / KEY_ZOOM);
          break;
        case 'a':
          s.panBy(-KEY_PAN);
          break;
        case 'd':
          s.panBy(KEY_PAN);
          break;
        case '0':
          s.fitAll();
          break;
        case 'escape':
          s.select(null);
          break;
        default:
          return;
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
    <button
      type="button"
      className="theme-toggle"
      onClick={() => appStore.getState().setTheme(next[theme])}
      data-testid="theme-toggle"
      title="theme: auto → dark → light"
      aria-label={`theme: ${theme} (switch to ${next[theme]})`}
    >
      theme: {theme}
    </button>
  );
}

function HelpMenu({ onTour, onGlossary, onWalk }: { onTour: () => void; onGlossary: () => void; onWalk: () => void }) {
  return (
    <span className="help-menu">
      <button type="button" onClick={onTour} data-testid="help-tour" title="reopen the tour">
        Tour
      </button>
      <button
        type="button"
        onClick={onWalk}
        data-testid="help-walk"
        title="walk one transformer block op by op under both backends"
      >
        Learn one layer
      </button>
      <button
        type="button"
        onClick={onGlossary}
        data-testid="help-glossary"
        title="what FSDP, shards, all-gathers … are"
      >
        Glossary
      </button>
    </span>
  );
}

/** Room left under timeline A's lanes for B's head, axis and first lane (px), and the least A keeps. */
const B_FIRST_LANE_PX = 96;
const A_MIN_LANES_PX = 64;

/**
 * Cap timeline A's lanes (they scroll within) so that B's first lane is on the first screen: the
 * cap is the viewport's height below A's lanes' top, less B's head, axis and first lane.
 */
function useFirstScreenFit(): void {
  useLayoutEffect(() => {
    const app = document.querySelector<HTMLElement>('.app');
    const content = document.querySelector<HTMLElement>('.content');
    if (!app || !content) return;
    const fitLanes = () => {
      const lanesA = document.querySelector<HTMLElement>('[data-testid="timeline-a"] .lanes-scroll');
      const b = document.querySelector<HTMLElement>('[data-testid="timeline-b"]');
      const bLanes = b?.querySelector<HTMLElement>('.lanes-scroll');
      if (!lanesA || !b || !bLanes) return;
      const top = lanesA.getBoundingClientRect().top + window.scrollY;
      const bChrome = bLanes.getBoundingClientRect().top - b.getBoundingClientRect().top; // B's head and axis
      const cap = Math.max(A_MIN_LANES_PX, window.innerHeight - top - bChrome - B_FIRST_LANE_PX);
      app.style.setProperty('--a-lanes-max', `${Math.floor(cap)}px`);
    };
    const ro = new ResizeObserver(fitLanes);
    ro.observe(content);
    window.addEventListener('resize', fitLanes);
    fitLanes();
    return () => {
      ro.disconnect();
      window.removeEventListener('resize', fitLanes);
    };
  }, []);
}

/** The presentation view's bar: the story, the next one, and the way out. */
function PresentBar() {
  const story = storyById(useApp((s) => s.story));
  const next = nextStory(story?.id ?? null);
  return (
    <div className="present-bar" data-testid="present-bar">
      <b className="present-title">{story ? story.title : 'fsdp-sim'}</b>
      <button
        type="button"
        className="primary"
        data-testid="next-story"
        onClick={() => void applyStory(appStore, next)}
        title={`next story: ${next.title}`}
      >
        Next story: {next.title} ›
      </button>
      <button
        type="button"
        data-testid="present-exit"
        title="leave the presentation view"
        onClick={() => appStore.getState().setPresent(false)}
      >
        Exit
      </button>
    </div>
  );
}

function PresentToggle() {
  return (
    <button
      type="button"
      data-testid="present-toggle"
      title="presentation view: big type, a next-story control"
      onClick={() => {
        appStore.getState().setPresent(true);
        focusSubject(appStore);
      }}
    >
      Present
    </button>
  );
}

/** Tour: open on the first visit (after the first timelines are drawn), reopened from Help. */
function useTour(): { step: number | null; open: () => void; setStep: (k: number) => void; close: () => void } {
  const [step, setStep] = useState<number | null>(null);
  const ready = useApp((s) => !!s.sides.a && !!s.sides.b);
  useEffect(() => {
    if (ready && !tourDone()) setStep((k) => k ?? 0);
  }, [ready]);
  const close = useCallback(() => setStep(null), []);
  return { step, open: () => setStep(0), setStep, close };
}

export function App() {
  const theme = useResolvedTheme();
  useThemeAttribute(theme);
  useKeyboardNav();
  const tour = useTour();
  const present = useApp((s) => s.present);
  useFirstScreenFit();
  const [glossary, setGlossary] = useState(false);
  const [drawer, setDrawer] = useState(false);
  const [walk, setWalk] = useState(false);
  const openGlossary = () => {
    setGlossary(true);
    requestAnimationFrame(() => document.querySelector('[data-testid="glossary"]')?.scrollIntoView({ block: 'start' }));
  };
  const help = { onTour: tour.open, onGlossary: openGlossary, onWalk: () => setWalk(true) };
  return (
    <div className={`app${drawer ? ' drawer-open' : ''}${present ? ' present' : ''}`}>
      <AppHeader drawer={drawer} onDrawer={setDrawer} present={present} help={help} />
      {present && <PresentBar />}
      <Banners />
      <div className="layout">
        <ConfigDrawer open={drawer} onClose={() => setDrawer(false)} />
        <MainContent
          walk={walk}
          onWalkClose={() => setWalk(false)}
          glossary={glossary}
          onGlossaryClose={() => setGlossary(false)}
        />
      </div>
      {tour.step !== null && <Tour step={tour.step} onStep={tour.setStep} onClose={tour.close} />}
    </div>
  );
}

interface HeaderProps {
  readonly drawer: boolean;
  readonly onDrawer: (open: boolean) => void;
  readonly present: boolean;
  readonly help: Parameters<typeof HelpMenu>[0];
}

/** The header: the config drawer's toggle, title, busy mark, live controls, stories, help, fit, present, theme. */
function AppHeader({ drawer, onDrawer, present, help }: HeaderProps) {
  const simulating = useApp((s) => s.simulating);
  return (
    <header className="app-header">
      <button
        type="button"
        className="drawer-toggle"
        onClick={() => onDrawer(!drawer)}
        aria-expanded={drawer}
        aria-controls="config-drawer"
        data-testid="drawer-toggle"
      >
        {drawer ? 'Close config' : 'Config'}
      </button>
      <h1>fsdp-sim</h1>
      <span className="subtitle">SimpleFSDP training step, two backends compared</span>
      {simulating && (
        <span className="busy" data-testid="simulating" role="status">
          simulating…
        </span>
      )}
      <LiveBar />
      <StoryMenu />
      <HelpMenu {...help} />
      <button type="button" className="fit" onClick={() => appStore.getState().fitAll()} title="fit the whole step (0)">
        Fit
      </button>
      {!present && <PresentToggle />}
      <ThemeToggle />
    </header>
  );
}

/** The config panel, a drawer below 900 px with a scrim that closes it. */
function ConfigDrawer({ open, onClose }: { open: boolean; onClose: () => void }) {
  return (
    <>
      <aside className="sidebar" id="config-drawer" aria-label="configuration">
        <button type="button" className="drawer-close" onClick={onClose} data-testid="drawer-close">
          Close config
        </button>
        <ErrorBoundary name="Config">
          <ConfigPanel />
        </ErrorBoundary>
      </aside>
      {open && <div className="drawer-scrim" onClick={onClose} aria-hidden="true" />}
    </>
  );
}

interface MainProps {
  readonly walk: boolean;
  readonly onWalkClose: () => void;
  readonly glossary: boolean;
  readonly onGlossaryClose: () => void;
}

/** The main column: caption, headline, the two timelines, then the panels and charts below them. */
function MainContent({ walk, onWalkClose, glossary, onGlossaryClose }: MainProps) {
  return (
    <main className="content">
      <StoryCaption />
      <Headline />
      <Legend />
      <ErrorBoundary name="Timeline A">
        <Timeline side="a" label="A" />
      </ErrorBoundary>
      <ErrorBoundary name="Timeline B">
        <Timeline side="b" label="B" />
      </ErrorBoundary>
      <ErrorBoundary name="Diff">
        <DiffTable />
      </ErrorBoundary>
      {walk && (
        <ErrorBoundary name="Step-through">
          <StepThrough onClose={onWalkClose} />
        </ErrorBoundary>
      )}
      <div className="grid-3">
        <ErrorBoundary name="Metrics">
          <MetricsTable />
        </ErrorBoundary>
        <ErrorBoundary name="Explain">
          <ExplainPanel />
        </ErrorBoundary>
        <ErrorBoundary name="Details">
          <DetailsPanel />
        </ErrorBoundary>
      </div>
      {glossary && (
        <ErrorBoundary name="Glossary">
          <GlossaryPanel onClose={onGlossaryClose} />
        </ErrorBoundary>
      )}
      <div className="grid-2">
        <ErrorBoundary name="Memory chart">
          <MemoryChart />
        </ErrorBoundary>
        <ErrorBoundary name="Loss chart">
          <LossChart />
        </ErrorBoundary>
      </div>
      <ErrorBoundary name="Sweep">
        <SweepPanel />
      </ErrorBoundary>
      <ErrorBoundary name="Calibration">
        <CalibrationPanel />
      </ErrorBoundary>
      <ErrorBoundary name="Export/import">
        <IoPanel />
      </ErrorBoundary>
      <SimFooter />
    </main>
  );
}

/** How long simulating both backends took, and where each timeline's clock is named. */
function SimFooter() {
  const simMs = useApp((s) => s.simMs);
  return (
    <footer className="muted small">
      simulated both backends in {fmtUs(simMs * 1000, { unit: 'ms', digits: 0 })} · each timeline's header names its
      clock (cost model, measured or imported)
    </footer>
  );
}
