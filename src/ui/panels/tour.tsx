// First-visit tour: five short steps (the two timelines, a collective, the metrics, the knobs,
// Run live), each outlining its target. Skippable (Skip, Escape), shown once per browser
// (localStorage), reopened from the Help menu.

import { useEffect, useRef } from 'react';

export const TOUR_DONE_KEY = 'fsdp-sim:tour-done';

interface Step {
  /** CSS selectors of the element to outline, first visible wins (the config hides in a drawer on phones). */
  readonly target: readonly string[];
  readonly title: string;
  readonly text: string;
}

export const TOUR_STEPS: readonly Step[] = [
  { target: ['[data-testid="timeline-a"]'], title: 'Two timelines, one training step', text: 'A runs aot_eager, B runs aot_eager_autobucketing, on the same model and cluster. Each row is one rank\'s compute or communication stream; time runs left to right.' },
  { target: ['[data-testid="timeline-b"]'], title: 'A collective', text: 'Green all-gathers fetch a layer\'s weights from the other ranks; orange reduce-scatters share gradients. Red waits are the GPU idling for the network. Click (or tap) one: arrows show its wait and the layer that uses it, and Explain says why it was scheduled so.' },
  { target: ['[data-testid="metrics"]'], title: 'The numbers', text: 'Step time, exposed communication, overlap and peak memory for A and B, and B\'s change against A. Hover a row name for its definition.' },
  { target: ['[data-testid="config"]', '[data-testid="drawer-toggle"]'], title: 'The knobs', text: 'Model, ranks, network and every autobucketing knob with torch\'s defaults. Hover one to read what it does and what raising it costs. Stories (top) load ready-made scenarios.' },
  { target: ['[data-testid="live-run"]'], title: 'Run it for real', text: 'Run live trains the tiny model on Web Workers, one per rank, with WebGPU kernels and real all-gathers through shared memory. Help reopens this tour and the glossary.' },
];

export function tourDone(): boolean {
  try {
    return localStorage.getItem(TOUR_DONE_KEY) === '1';
  } catch {
    return true; // no storage (privacy mode): do not nag on every visit
  }
}

function markDone(): void {
  try {
    localStorage.setItem(TOUR_DONE_KEY, '1');
  } catch {
    // storage refused: the tour simply shows again next time
  }
}

export function Tour({ step, onStep, onClose }: { step: number; onStep: (k: number) => void; onClose: () => void }) {
  const s = TOUR_STEPS[step];
  const nextRef = useRef<HTMLButtonElement>(null);
  const close = () => { markDone(); onClose(); };
  useEffect(() => {
    const el = s.target.map((q) => document.querySelector<HTMLElement>(q)).find((e) => e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden');
    el?.classList.add('tour-target');
    el?.scrollIntoView({ block: 'nearest' });
    nextRef.current?.focus();
    return () => el?.classList.remove('tour-target');
  }, [s]);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => { if (e.key === 'Escape') { markDone(); onClose(); } };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);
  const last = step === TOUR_STEPS.length - 1;
  return (
    <div className="tour" role="dialog" aria-labelledby="tour-title" aria-describedby="tour-text" data-testid="tour" data-step={step}>
      <div className="tour-head">
        <b id="tour-title">{s.title}</b>
        <span className="muted small">{step + 1} / {TOUR_STEPS.length}</span>
      </div>
      <p id="tour-text">{s.text}</p>
      <div className="tour-buttons">
        <button type="button" className="link" onClick={close} data-testid="tour-skip">Skip tour</button>
        {step > 0 && <button type="button" onClick={() => onStep(step - 1)} data-testid="tour-back">Back</button>}
        <button type="button" className="primary" ref={nextRef} onClick={() => (last ? close() : onStep(step + 1))} data-testid="tour-next">
          {last ? 'Done' : 'Next'}
        </button>
      </div>
    </div>
  );
}
